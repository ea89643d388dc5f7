//go:build unix

package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// canWrite asks the system whether the process may open path for
// writing.
func canWrite(path string) error {
	const wOK = 2 // W_OK
	for {
		err := syscall.Access(path, wOK)
		if err == syscall.EINTR {
			continue
		}
		return err
	}
}

// keepOwner gives f the owner and group orig has, when they differ from
// the ones it was created with.
func keepOwner(f File, orig fs.FileInfo) error {
	want, ok := orig.Sys().(*syscall.Stat_t)
	if !ok {
		return nil // not the real filesystem
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	have, ok := st.Sys().(*syscall.Stat_t)
	if !ok || have.Uid == want.Uid && have.Gid == want.Gid {
		return nil
	}
	c, ok := f.(interface{ Chown(uid, gid int) error })
	if !ok {
		return nil
	}
	if err := c.Chown(int(want.Uid), int(want.Gid)); err != nil {
		return fmt.Errorf("uid %d, gid %d: %w", want.Uid, want.Gid, err)
	}
	return nil
}

// ownerToGive returns the owner and group of ref that a file this process
// creates should get: ok only for a process running as root and a
// FileInfo of the real filesystem.
func ownerToGive(ref fs.FileInfo) (uid, gid int, ok bool) {
	if ref == nil || os.Geteuid() != 0 {
		return 0, 0, false
	}
	st, isStat := ref.Sys().(*syscall.Stat_t)
	if !isStat {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// sameOwner reports whether fi has the owner uid and group gid; a
// FileInfo without them counts as having them.
func sameOwner(fi fs.FileInfo, uid, gid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == uid && int(st.Gid) == gid
}
