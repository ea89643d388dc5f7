package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

// TestFilesBelow: a file as it is and a directory as engine.Store.Files
// walks it (links listed, never followed
// into a directory).
func TestFilesBelow(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "sub", "b.jsonl")
	a := filepath.Join(dir, "a.jsonl")
	single := filepath.Join(t.TempDir(), "single.txt")
	for _, f := range []string{a, b, filepath.Join(dir, "notes.txt"), single} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{single, a, b}
	// A link is listed (as a link: migrating it is refused, see
	// engine.Store.Migrate), never followed into a directory.
	if testenv.Symlink(a, filepath.Join(dir, "link.jsonl")) {
		want = []string{single, a, filepath.Join(dir, "link.jsonl"), b}
	}
	_ = os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "linkdir"))
	got, skipped, err := engine.FilesBelow(context.Background(), engine.StoreOptions{}, single, dir)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FilesBelow (-want +got):\n%s", diff)
	}
	if _, _, err := engine.FilesBelow(context.Background(), engine.StoreOptions{}, filepath.Join(dir, "missing")); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a missing path: %v, want ErrNotFound", err)
	}
}
