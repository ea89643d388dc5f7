package search

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
)

// TestRandomBytesInShard writes random bytes at a few offsets of one
// database file between two searches, as a failing disk or a stray
// program would: the second search must find every hit the first did
// (the file is rebuilt) or fail with ErrIndex, never return fewer hits
// without a word. SQLite notices such damage only where it reads it, and
// quick_check reads neither FTS5's doclists nor the values of rows.
func TestRandomBytesInShard(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	if _, err := workload.Dir(root, 24, 20000, 7); err != nil {
		t.Fatal(err)
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	q := Query{Text: "the OR file", Stores: stores}
	for trial := range 8 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			var indexed int64
			x := openIndex(t, Options{Dir: dir, Progress: func(_, total int64) { indexed = total }})
			want, err := collect(x, q)
			if err != nil || len(want) == 0 {
				t.Fatalf("first search: %d hits, %v", len(want), err)
			}
			r := rand.New(rand.NewPCG(uint64(trial), 1))
			files := indexDataFiles(t, dir)
			path := files[trial%len(files)]
			damageFile(t, path, r, 3, 512)
			indexed = 0
			got, err := collect(x, q)
			switch {
			case errors.Is(err, ErrIndex):
				t.Logf("failed loudly: %v", err)
			case err != nil:
				t.Fatalf("second search: %v", err)
			case len(got) != len(want):
				t.Fatalf("after damage to %s: %d hits, want %d", filepath.Base(path), len(got), len(want))
			case indexed == 0:
				t.Errorf("the damaged file was not rebuilt")
			}
			// Once rebuilt, the index is trusted again: nothing is indexed.
			indexed = 0
			if again, err := collect(x, q); err != nil || len(again) != len(want) || indexed != 0 {
				t.Errorf("third search: %d hits, %v, %d bytes indexed; want %d hits, none indexed", len(again), err, indexed, len(want))
			}
		})
	}
}

// damageFile writes n runs of size random bytes at random offsets of
// path, keeping its size.
func damageFile(t *testing.T, path string, r *rand.Rand, n, size int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < int64(size)*2 {
		t.Fatalf("%s is only %d bytes", path, st.Size())
	}
	buf := make([]byte, size)
	for range n {
		for i := range buf {
			buf[i] = byte(r.UintN(256))
		}
		if _, err := f.WriteAt(buf, r.Int64N(st.Size()-int64(size))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDamageTimeRestored is TestRandomBytesInShard's case with the
// modification time put back after the change (touch -d): the inode's
// change time, which no program can set, still tells.
func TestDamageTimeRestored(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows' stat has no change time")
	}
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	dir := filepath.Join(t.TempDir(), "index")
	var indexed int64
	x := openIndex(t, Options{Dir: dir, Progress: func(_, total int64) { indexed = total }})
	want := searchAll(t, x, Query{Text: "flaky", Stores: stores})
	for _, path := range indexDataFiles(t, dir) {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte{0}, st.Size()-1) // (a byte of a page's free space, most likely)
		f.Close()
		if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	indexed = 0
	if got := searchAll(t, x, Query{Text: "flaky", Stores: stores}); len(got) != len(want) || indexed == 0 {
		t.Errorf("after a change with the time put back: %v (want %v), %d bytes indexed (want the files again)", got, want, indexed)
	}
}
