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

// FindRead reads everything stored for the session arg names (Find,
// then Store.Read), closing the store it opened.
func FindRead(ctx context.Context, o StoreOptions, arg string) (*Contents, error) {
	st, x, err := Find(ctx, o, arg)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Read(ctx, x)
}

// Trees returns the sessions at path, each with its subagent sessions
// below it (Info.Children), in List's order: the session of the session
// directory path, or else every top-level session below the directory
// path, at any depth. o gives the store's other options (its Dir is set
// from path). What cannot be read goes to warn (ListOptions.Warn). It
// returns no session, and no error, when path holds none.
func Trees(ctx context.Context, o StoreOptions, path string, warn func(error)) ([]*Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	o.Dir, path = abs, ""
	if IsSessionDir(o.FS, abs) {
		o.Dir, path = filepath.Dir(abs), abs
	}
	st, err := OpenStore(ctx, o)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	list, err := st.List(ctx, ListOptions{Subagents: true, Warn: warn})
	if err != nil {
		return nil, err
	}
	var tops []*Info
	for _, x := range list {
		if (path == "" && x.Parent == nil) || x.Dir == path {
			tops = append(tops, x)
		}
	}
	return tops, nil
}
