package vfs

import (
	"fmt"
	"io/fs"
)

// OwnLike gives f, a file this process has just created for a session,
// the owner and group of ref (the session file, or the directory a new
// file goes in) when the process runs as root and they differ: a command
// run with sudo on a user's session must not leave files that user
// cannot open (a root-owned 0600 lock file refuses every later write of
// the session's owner). A process that is not root cannot give files
// away, and its files are the ones it would create anyway, so nothing is
// done; nor for files of a filesystem other than the real one.
func OwnLike(f File, ref fs.FileInfo) error {
	uid, gid, ok := ownerToGive(ref)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("give %s the owner of %s: %w", f.Name(), ref.Name(), err)
	}
	if sameOwner(st, uid, gid) {
		return nil
	}
	c, ok := f.(interface{ Chown(uid, gid int) error })
	if !ok {
		return nil
	}
	if err := c.Chown(uid, gid); err != nil {
		return fmt.Errorf("give %s the owner of %s (uid %d, gid %d): %w", f.Name(), ref.Name(), uid, gid, err)
	}
	return nil
}

// ChownLike is OwnLike for the file or directory at path, which is not
// followed when it is a symbolic link. It goes through fsys when fsys can
// change owners (the real filesystem can, and FaultFS over it); otherwise
// nothing is done.
func ChownLike(fsys FS, path string, ref fs.FileInfo) error {
	uid, gid, ok := ownerToGive(ref)
	if !ok {
		return nil
	}
	c, ok := fsys.(lchowner)
	if !ok {
		return nil
	}
	st, err := fsys.Lstat(path)
	if err != nil {
		return fmt.Errorf("give %s the owner of %s: %w", path, ref.Name(), err)
	}
	if sameOwner(st, uid, gid) {
		return nil
	}
	if err := c.Lchown(path, uid, gid); err != nil {
		return fmt.Errorf("give %s the owner of %s (uid %d, gid %d): %w", path, ref.Name(), uid, gid, err)
	}
	return nil
}

// lchowner is an FS that can change the owner of a file: the real one.
type lchowner interface {
	Lchown(name string, uid, gid int) error
}
