package render

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/tree"
)

// Open opens the session file at path read-only and takes what the
// renderers show of it. With whole, the file is read whole
// (engine.OpenFile, Snapshot): every entry's bytes at once, and its Tree.
// Otherwise it is read as an engine.View (SnapshotView), which holds a
// small part of a large file at a time, for the renderers that go
// through the entries in order. The caller closes it (Close).
func Open(ctx context.Context, path string, whole bool) (*Session, error) {
	if whole {
		s, err := engine.OpenFile(ctx, path, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		sv := Snapshot(s)
		sv.whole = s
		return sv, nil
	}
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: filepath.Dir(path)})
	if err != nil {
		return nil, err
	}
	v, err := st.View(ctx, path)
	if err != nil {
		return nil, err
	}
	sv := SnapshotView(v)
	sv.opened = true
	return sv, nil
}

// View returns the View a session was taken from (SnapshotView, Open),
// nil for one taken from an open session.
func (s *Session) View() *engine.View { return s.view }

// BranchTo returns the path from the root to the entry named by id (a
// full id or a unique prefix; "" for the leaf) of a session Open opened
// (engine.View.BranchTo or engine.Session.BranchTo).
func (s *Session) BranchTo(id string) ([]*engine.Entry, error) {
	if s.view != nil {
		return s.view.BranchTo(id)
	}
	if s.whole == nil {
		return nil, errors.New("render: BranchTo of a session Open did not open")
	}
	return s.whole.BranchTo(id)
}

// Tree returns the entries of a session Open opened whole as a tree
// (engine.Session.Tree); nil for one read as a View.
func (s *Session) Tree() []*tree.Node {
	if s.whole == nil {
		return nil
	}
	return s.whole.Tree()
}

// Close closes the session or the View Open opened; it does nothing for
// a session taken otherwise.
func (s *Session) Close() error {
	switch {
	case s.whole != nil:
		return s.whole.Close()
	case s.view != nil && s.opened:
		return s.view.Close()
	}
	return nil
}
