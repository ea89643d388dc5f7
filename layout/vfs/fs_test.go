package vfs_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestOSReadOnlyOpen checks the read-only open path of the real filesystem
// (which bypasses os.OpenFile): contents, the errors callers test for,
// and that NoFollow refuses a symbolic link.
func TestOSReadOnlyOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := vfs.OS()
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if cerr := f.Close(); err != nil || cerr != nil || string(b) != "line\n" {
		t.Fatalf("read %q, %v, close %v", b, err, cerr)
	}
	_, err = fsys.OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "missing") {
		t.Fatalf("missing file: %v, want a *PathError that is fs.ErrNotExist", err)
	}
	testenv.SkipOnWindows(t, "no O_NOFOLLOW (vfs.NoFollow is 0), and symbolic links need a privilege")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.OpenFile(link, os.O_RDONLY|vfs.NoFollow, 0); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("symlink with NoFollow: %v, want ELOOP", err)
	}
	if f, err := fsys.OpenFile(link, os.O_RDONLY, 0); err != nil {
		t.Fatalf("symlink without NoFollow: %v", err)
	} else {
		f.Close()
	}
}
