package vfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
)

// TestReplaceHeldWithoutDeleteSharing replaces a file another program
// holds open without FILE_SHARE_DELETE (as os.Open does): Windows refuses
// the rename, and the rewrite fails with ErrInUse, naming the file, with
// the original untouched and no temporary file left behind.
func TestReplaceHeldWithoutDeleteSharing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	must(t, os.WriteFile(p, []byte("old\n"), vfs.FileMode))
	h, err := os.Open(p) // FILE_SHARE_READ|FILE_SHARE_WRITE only
	must(t, err)
	err = vfs.WriteFileAtomic(vfs.OS(), p, []byte("new\n"), vfs.FileMode)
	if !errors.Is(err, vfs.ErrInUse) || !strings.Contains(err.Error(), "s.jsonl") {
		t.Fatalf("replace of a file held without delete sharing: %v, want ErrInUse naming the file", err)
	}
	must(t, h.Close())
	if got, err := os.ReadFile(p); err != nil || string(got) != "old\n" {
		t.Errorf("after the refused replace: %q, %v; want the old file", got, err)
	}
	ents, err := os.ReadDir(dir)
	must(t, err)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file (the temporary one removed)", len(ents))
	}
	// Once the other program lets go, the rewrite works.
	must(t, vfs.WriteFileAtomic(vfs.OS(), p, []byte("new\n"), vfs.FileMode))
}

// TestOpenSharesDelete checks that every open of the real filesystem
// allows deleting and renaming the file meanwhile.
func TestOpenSharesDelete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	must(t, os.WriteFile(p, []byte("x\n"), vfs.FileMode))
	f, err := vfs.OpenRegular(p)
	must(t, err)
	defer f.Close()
	g, err := vfs.OS().OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	defer g.Close()
	if err := os.Rename(p, filepath.Join(dir, "moved.jsonl")); err != nil {
		t.Fatalf("rename of a file open through vfs: %v", err)
	}
	if _, err := g.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "moved.jsonl")); err != nil || string(got) != "x\ny\n" {
		t.Errorf("appended through the moved file: %q, %v", got, err)
	}
}
