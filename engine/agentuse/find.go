package agentuse

import (
	"context"
	"path/filepath"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// IsSessionDir reports whether path names an AgentUse session directory:
// one that holds a regular session.json file. A nil fsys means vfs.OS().
func IsSessionDir(fsys vfs.FS, path string) bool {
	if fsys == nil {
		fsys = vfs.OS()
	}
	fi, err := fsys.Stat(filepath.Join(path, layout.AgentUseSessionFile))
	return err == nil && fi.Mode().IsRegular()
}

// Find resolves a session named by a person: the path of a session
// directory (found in a store on the sessions beside it), or else a full
// id or unique id prefix in the store o opens (Store.Resolve). The
// caller closes the store.
func Find(ctx context.Context, o StoreOptions, arg string) (*Store, *Info, error) {
	if IsSessionDir(o.FS, arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return nil, nil, err
		}
		o.Dir, arg = filepath.Dir(abs), abs
	}
	st, err := OpenStore(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	x, err := st.Resolve(ctx, arg)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return st, x, nil
}
