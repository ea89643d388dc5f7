//go:build unix

package vfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// Run as root in a directory another user owns, WriteFileAtomic gives a
// new file, and MkdirAllSync new directories, the owner and group of the
// directory they are made in; ChownLike and OwnLike give a file the
// owner of another (through FaultFS too). A rewrite keeps the file's own
// owner (KeepAttrs).
func TestNewFilesOwnedLikeTheirDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create files for another user")
	}
	const uid, gid = 65534, 65534
	dir := filepath.Join(t.TempDir(), "store")
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.Chown(dir, uid, gid))
	check := func(p string, wantUID, wantGID uint32) {
		t.Helper()
		u, g := owner(t, p)
		if u != wantUID || g != wantGID {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, u, g, wantUID, wantGID)
		}
	}
	newFile := filepath.Join(dir, "a", "b", "s.jsonl")
	must(t, vfs.MkdirAllSync(vfs.OS(), filepath.Dir(newFile), vfs.DirMode))
	check(filepath.Join(dir, "a"), uid, gid)
	check(filepath.Join(dir, "a", "b"), uid, gid)
	must(t, vfs.WriteFileAtomic(vfs.OS(), newFile, []byte("x\n"), vfs.FileMode))
	check(newFile, uid, gid)

	// A rewrite keeps the owner the file has, not the directory's.
	must(t, os.Chown(newFile, 0, 0))
	must(t, vfs.WriteFileAtomic(vfs.OS(), newFile, []byte("y\n"), vfs.FileMode))
	check(newFile, 0, 0)

	ref, err := os.Stat(dir)
	must(t, err)
	ffs := vfstest.NewFaultFS(vfs.OS())
	must(t, vfs.ChownLike(ffs, newFile, ref))
	check(newFile, uid, gid)
	if ffs.Calls(vfstest.OpChown) != 1 {
		t.Errorf("ChownLike through FaultFS made %d chown calls, want 1", ffs.Calls(vfstest.OpChown))
	}

	mine := filepath.Join(t.TempDir(), "mine")
	f, err := os.Create(mine)
	must(t, err)
	defer f.Close()
	must(t, vfs.OwnLike(f, ref))
	check(mine, uid, gid)
}
