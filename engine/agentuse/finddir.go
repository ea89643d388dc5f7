package agentuse

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/layout"
)

// IsSessionDir reports whether path names an AgentUse session directory:
// one that holds a regular session.json file.
func IsSessionDir(path string) bool {
	fi, err := os.Stat(filepath.Join(path, layout.AgentUseSessionFile))
	return err == nil && fi.Mode().IsRegular()
}

// FindDir returns the session whose directory is dir, with a store of
// the sessions beside it (dir's parent is the store's session root).
func FindDir(ctx context.Context, dir string) (*Store, *Session, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	st, err := OpenStore(ctx, Options{SessionRoot: filepath.Dir(abs)})
	if err != nil {
		return nil, nil, err
	}
	all, err := st.Sessions(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range all {
		if x.Dir == abs {
			return st, x, nil
		}
	}
	return nil, nil, fmt.Errorf("AgentUse session %s: %w", dir, errs.ErrNotFound)
}
