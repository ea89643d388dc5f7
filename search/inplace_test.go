package search

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
)

// TestEditInPlaceTimeRestored: a file edited in place, its last line
// included, with its size and modification time put back (the inode
// stays) is indexed again: the inode change time, which no program can
// set back, is kept with each file (issue 39, item 11: such an edit of
// the last line went unnoticed, where README said only edits keeping the
// last line were).
func TestEditInPlaceTimeRestored(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows' stat has no change time")
	}
	root, s1, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	// Old files, so that the racy window does not decide.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	x := openIndex(t, Options{Dir: filepath.Join(t.TempDir(), "index")})
	appendLines(t, s1, userLine("z1", "x1", "2026-03-01T10:00:00.000Z", "a zebra crossing"))
	if err := os.Chtimes(s1, old, old); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"z1 user"}, searchAll(t, x, Query{Text: "zebra", Stores: stores})); diff != "" {
		t.Fatalf("before the edit (-want +got):\n%s", diff)
	}
	st, err := os.Stat(s1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s1)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(data, []byte("zebra"))
	f, err := os.OpenFile(s1, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("horse"), int64(i)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(s1, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); len(got) != 0 {
		t.Errorf("zebra after it was edited out of the last line: %v", got)
	}
	if diff := cmp.Diff([]string{"z1 user"}, searchAll(t, x, Query{Text: "horse", Stores: stores})); diff != "" {
		t.Errorf("the edited last line (-want +got):\n%s", diff)
	}
}
