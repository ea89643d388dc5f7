//go:build unix

package vfs

import (
	"fmt"
	"io/fs"
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
