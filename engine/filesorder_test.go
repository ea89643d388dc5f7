package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestFilesPathOrder: Store.Files yields in path order, which is not the
// order of the walk (a directory "a" is walked before "a-b", yet
// "a-b/..." sorts before "a/..."), with nothing left out and with a
// special file the walk yields as an error among the files.
func TestFilesPathOrder(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/2.jsonl", "a/1.jsonl", "a-b/1.jsonl", "a b/1.jsonl", "a.b/1.jsonl", "0.jsonl", "b.jsonl", "a/c/1.jsonl"} {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	walk := func() (paths []string, errs int) {
		t.Helper()
		st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: root})
		if err != nil {
			t.Fatal(err)
		}
		for f, err := range st.Files(context.Background()) {
			if err != nil {
				if f.Path == "" {
					t.Fatal(err)
				}
				errs++
			}
			paths = append(paths, f.Path)
		}
		return paths, errs
	}
	got, errs := walk()
	if errs != 0 || len(got) != 8 || !slices.IsSorted(got) {
		t.Fatalf("files %q (%d errors), want 8 in path order", got, errs)
	}
	if err := mkfifo(filepath.Join(root, "a", "p.jsonl")); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	got, errs = walk()
	if errs != 1 || len(got) != 9 || !slices.IsSorted(got) {
		t.Fatalf("files and pipe %q (%d errors), want 9 in path order, one an error", got, errs)
	}
}
