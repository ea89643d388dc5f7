package agentuse_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// idQueue returns a StoreOptions.NewID that hands out ids in order.
func idQueue(t *testing.T, ids ...string) func() string {
	return func() string {
		if len(ids) == 0 {
			t.Fatal("no id queued")
		}
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// TestAgentUseSessionsIterator: Sessions yields each session with its
// tree complete, and what it passes over as an error where it was found,
// going on after it; a caller may stop at any point; an error reading the
// store's root ends it.
func TestAgentUseSessionsIterator(t *testing.T) {
	t.Parallel()
	const (
		idA = "01M7ZXJ0KC9S183XADC88B6A01"
		idB = "01M7ZXJ0KC9S183XADC88B6B01"
		idC = "01M7ZXJ0KC9S183XADC88B6C01"
	)
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "session")
	ffs := vfstest.NewFaultFS(vfs.OS())
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, FS: ffs, Sync: agentuse.SyncNone, NewID: idQueue(t, idA, idB, idC)})
	if err != nil {
		t.Fatal(err)
	}
	a := mustCreate(t, st, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "a", Name: "a"}, Model: "p:m"})
	b, err := a.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "b", Name: "b"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	mustCreate(t, st, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "c", Name: "c"}, Model: "p:m"})
	// Two directories that cannot be read: one inside A's tree, one at
	// the top.
	inTree := filepath.Join(a.Dir(), layout.AgentUseSubagentDir, "broken")
	top := filepath.Join(root, "zz-broken")
	for _, d := range []string{inTree, top} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ffs.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool { return p == inTree || p == top }})

	type step struct {
		id, err string
	}
	var got []step
	for x, err := range st.Sessions(ctx) {
		if err != nil {
			var pe *os.PathError
			if !errors.As(err, &pe) || !errors.Is(err, syscall.EIO) {
				t.Errorf("passed over: %v, want a *PathError naming the directory", err)
			}
			got = append(got, step{err: pe.Path})
			continue
		}
		got = append(got, step{id: x.ID})
		if x.ID == idA {
			// A's tree was read before A was yielded.
			if diff := cmp.Diff([]string{idB}, auSessionIDs(x.Children)); diff != "" {
				t.Errorf("children of A when yielded (-want +got):\n%s", diff)
			}
			if len(x.Skipped) != 1 || !strings.Contains(x.Skipped[0].Error(), inTree) {
				t.Errorf("A.Skipped = %v, want the unreadable directory in its tree", x.Skipped)
			}
		}
	}
	want := []step{{id: idA}, {id: idB}, {err: inTree}, {id: idC}, {err: top}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}

	// A caller stops where it likes: after a session, after an error,
	// inside a tree or between trees.
	for n := 1; n <= len(want); n++ {
		i := 0
		for range st.Sessions(ctx) {
			i++
			if i == n {
				break
			}
		}
		if i != n {
			t.Errorf("stopping after %d: %d yielded", n, i)
		}
	}

	// List and Resolve pass over the same; List tells Warn.
	var warned []string
	list, err := st.List(ctx, agentuse.ListOptions{Subagents: true, Warn: func(err error) {
		var pe *os.PathError
		if errors.As(err, &pe) {
			warned = append(warned, pe.Path)
		}
	}})
	if err != nil || len(list) != 3 {
		t.Errorf("List = %d sessions, %v; want 3", len(list), err)
	}
	if diff := cmp.Diff([]string{inTree, top}, warned); diff != "" {
		t.Errorf("List warned (-want +got):\n%s", diff)
	}

	// An error reading the root is yielded and ends the iteration.
	ffs.Clear()
	ffs.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool { return p == root }})
	n := 0
	for x, err := range st.Sessions(ctx) {
		n++
		if x != nil || !errors.Is(err, syscall.EIO) {
			t.Errorf("unreadable root: %v, %v; want EIO", x, err)
		}
	}
	if n != 1 {
		t.Errorf("unreadable root: %d yields, want 1", n)
	}
	ffs.Clear()

	// A done context ends it with its error.
	done, cancel := context.WithCancel(ctx)
	cancel()
	n = 0
	for x, err := range st.Sessions(done) {
		n++
		if x != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("done context: %v, %v", x, err)
		}
	}
	if n != 1 {
		t.Errorf("done context: %d yields, want 1", n)
	}
}

// TestAgentUseResolveAndOpenByPath: a session is named by the path of its
// directory (absolute, relative, or a bare directory name in the working
// directory), by its id or by a unique prefix; a directory that is no
// session of the store is not found, and is never opened for writing.
func TestAgentUseResolveAndOpenByPath(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root := filepath.Join(base, "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, auSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir, id := w.Dir(), w.ID()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names := []string{dir, id, strings.ToLower(id[:20])}
	if rel, err := filepath.Rel(mustGetwd(t), dir); err == nil {
		names = append(names, rel)
	} else if runtime.GOOS != "windows" { // where the temporary directory may be on another drive
		t.Fatal(err)
	}
	for _, name := range names {
		x, err := st.Resolve(ctx, name)
		if err != nil || x.ID != id || x.Dir != dir {
			t.Errorf("Resolve(%q) = %+v, %v; want session %s", name, x, err, id)
		}
		s, err := st.Open(ctx, name)
		if err != nil || s.ID() != id || s.Dir() != dir {
			t.Errorf("Open(%q) = %v, want session %s in %s", name, err, id, dir)
			continue
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	other := filepath.Join(root, "not-a-session")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve(ctx, other); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("Resolve of a directory that is no session: %v, want ErrNotFound", err)
	}
	if _, err := st.Open(ctx, other); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("Open of a directory that is no session: %v, want ErrNotFound", err)
	}
	// A session of another store is no session of this one.
	elsewhere, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(base, "elsewhere"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	ow := mustCreate(t, elsewhere, auSpec)
	outside := ow.Dir()
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve(ctx, outside); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("Resolve of a session outside the store: %v, want ErrNotFound", err)
	}
	if _, err := st.Open(ctx, outside); !errors.Is(err, layout.ErrUnsafeName) {
		t.Errorf("Open of a session outside the store: %v, want ErrUnsafeName", err)
	}

	// A bare name that is a session directory in the working directory is
	// that directory, not an id prefix.
	t.Chdir(root)
	name := filepath.Base(dir)
	if x, err := st.Resolve(ctx, name); err != nil || x.Dir != dir {
		t.Errorf("Resolve(%q) in the store directory = %+v, %v; want %s", name, x, err, dir)
	}
}

// TestAgentUseStoreClose: closing a store closes the sessions opened from
// it that are still open, releasing their locks, and its methods then
// fail with ErrClosed.
func TestAgentUseStoreClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	open := mustCreate(t, st, auSpec)
	closed := mustCreate(t, st, auSpec)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := st.Resolve(ctx, open.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := open.SetStatus(agentuse.StatusCompleted); !errors.Is(err, agentuse.ErrClosed) {
		t.Errorf("a session of a closed store: %v, want ErrClosed", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if st.Dir() != root {
		t.Errorf("Dir of a closed store = %q, want %q", st.Dir(), root)
	}
	// Its lock is released: another store opens the session.
	st2, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	again, err := st2.Open(ctx, open.ID())
	if err != nil {
		t.Fatalf("Open after the store that held it closed: %v", err)
	}
	if err := again.SetStatus(agentuse.StatusCompleted); err != nil {
		t.Error(err)
	}

	calls := map[string]func() error{
		"Create": func() error { _, err := st.Create(ctx, auSpec); return err },
		"Open":   func() error { _, err := st.Open(ctx, open.ID()); return err },
		"List":   func() error { _, err := st.List(ctx, agentuse.ListOptions{}); return err },
		"Resolve": func() error {
			_, err := st.Resolve(ctx, open.ID())
			return err
		},
		"Read":            func() error { _, err := st.Read(ctx, x); return err },
		"StopSessionTree": func() error { _, err := st.StopSessionTree(ctx, open.ID(), agentuse.StopOptions{}); return err },
		"WriteFiles":      func() error { return st.WriteFiles(ctx, open.Dir(), map[string][]byte{"x.json": []byte("{}")}) },
		"Sessions": func() error {
			for _, err := range st.Sessions(ctx) {
				return err
			}
			return nil
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, agentuse.ErrClosed) {
			t.Errorf("%s on a closed store: %v, want ErrClosed", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(open.Dir(), "x.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFiles on a closed store wrote: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
