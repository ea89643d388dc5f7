package agentuse

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/layout"
)

// WriteFiles writes files into the session directory dir of the store,
// under the session's writer lock (dir and missing subdirectories are
// created): each file, named by its path relative to dir with "/", is
// replaced atomically with its bytes as given. Replication's pull uses it
// to restore and update sessions; paths are checked element by element
// and the lock file is refused.
func (s *Store) WriteFiles(ctx context.Context, dir string, files map[string][]byte) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.ensureDir(dir); err != nil {
		return fmt.Errorf("write session %s: %w", dir, err)
	}
	w, err := s.lockWriter(ctx, dir, "")
	if err != nil {
		return err
	}
	defer w.Close()
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		elems := strings.Split(rel, "/")
		for _, e := range elems {
			if err := layout.CheckName(e); err != nil {
				return fmt.Errorf("write session %s: %w", dir, err)
			}
		}
		if rel == layout.AgentUseLockFile {
			return fmt.Errorf("write session %s: %s is the lock file: %w", dir, rel, layout.ErrUnsafeName)
		}
		file := filepath.Join(append([]string{dir}, elems...)...)
		if err := s.ensureDir(filepath.Dir(file)); err != nil {
			return fmt.Errorf("write session %s: %w", dir, err)
		}
		if err := s.writeFile(file, files[rel]); err != nil {
			return err
		}
	}
	return w.Close()
}
