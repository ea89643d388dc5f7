package search

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// stateReads is an FS that counts the reads of the own engine's state
// file.
type stateReads struct {
	vfs.FS
	n atomic.Int32
}

func (f *stateReads) ReadFile(name string) ([]byte, error) {
	if filepath.Base(name) == ownStateName {
		f.n.Add(1)
	}
	return f.FS.ReadFile(name)
}

// behindFixture returns the fixture store's first session, the store,
// and a directory for an index of it; it skips the test with FTS5.
func behindFixture(t *testing.T) (s1 string, stores []layout.Place, dir string) {
	t.Helper()
	if !ownEngine() {
		t.Skip("the own engine's state")
	}
	root, s1, _ := fixtureStore(t)
	return s1, []layout.Place{{Format: layout.FormatJSONL, Root: root}}, filepath.Join(t.TempDir(), "index")
}

// TestBehindDecodesStateOnce: a search in a new process that finds an
// append reads the state under the lock shared, finds it behind, and
// updates it from that reading rather than decoding the file again.
func TestBehindDecodesStateOnce(t *testing.T) {
	s1, stores, dir := behindFixture(t)
	searchAll(t, openIndex(t, Options{Dir: dir}), Query{Text: "zebra", Stores: stores})
	appendLines(t, s1, userLine("z1", "x1", "2026-03-01T10:00:00.000Z", "a zebra crossing"))
	fsys := &stateReads{FS: vfs.OS()}
	x := openIndex(t, Options{Dir: dir, FS: fsys})
	if diff := cmp.Diff([]string{"z1 user"}, searchAll(t, x, Query{Text: "zebra", Stores: stores})); diff != "" {
		t.Errorf("after the append (-want +got):\n%s", diff)
	}
	if n := fsys.n.Load(); n != 1 {
		t.Errorf("the state was read %d times by a search that updated it, want 1", n)
	}
	if x.readSt != nil {
		t.Error("the state read is held after the search")
	}
}

// TestBehindStateChanged: the state a search read under the lock shared
// serves its update only when the state file is still that one; when
// another writer came in between, the file is read again.
func TestBehindStateChanged(t *testing.T) {
	s1, stores, dir := behindFixture(t)
	other := openIndex(t, Options{Dir: dir})
	searchAll(t, other, Query{Text: "zebra", Stores: stores})
	x := openIndex(t, Options{Dir: dir})
	o := &own{x: x, dir: x.ownDir()}
	kept := newOwnState()
	x.readSt = &stateCache{tag: o.stateTag(), st: kept}
	if st, err := x.readStateCached(true); err != nil || st != kept {
		t.Fatalf("with the state file unchanged: %p, %v; want the state read before (%p)", st, err, kept)
	}
	if x.readSt != nil {
		t.Error("the state read is still held after an update took it")
	}
	x.readSt = &stateCache{tag: o.stateTag(), st: kept}
	appendLines(t, s1, userLine("z1", "x1", "2026-03-01T10:00:00.000Z", "a zebra crossing"))
	searchAll(t, other, Query{Text: "zebra", Stores: stores}) // another writer's update
	st, err := x.readStateCached(true)
	if err != nil || st == kept {
		t.Fatalf("after another writer's update: %p, %v; want the state file read again", st, err)
	}
	if st.Files[s1] == nil || st.Files[s1].Size == 0 {
		t.Errorf("the state read again does not hold %s", s1)
	}
}
