//go:build unix

package lock

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/sessctl/sessctl/layout/vfs"
)

const (
	// oNoFollow makes open fail with ELOOP when the last path element is a
	// symbolic link.
	oNoFollow = syscall.O_NOFOLLOW
	// oNonBlock keeps an open of a FIFO planted in place of a record from
	// blocking; it has no effect on regular files.
	oNonBlock = syscall.O_NONBLOCK
)

// pidAlive reports whether a process with this pid exists. EPERM means it
// exists but belongs to someone else; any other error is taken as "alive"
// too, because only ESRCH proves that the process is gone.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}

// linkCount returns the number of hard links of the file fi describes, or 1
// when the platform does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// isNoLock reports whether err says the file system cannot do flock(2) at
// all, as opposed to "someone holds it".
func isNoLock(err error) bool {
	return errors.Is(err, syscall.ENOLCK) ||
		errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENOTSUP)
}

// replaceFile renames tmp over path through fsys, atomically.
func replaceFile(fsys vfs.FS, tmp, path string) error { return fsys.Rename(tmp, path) }
