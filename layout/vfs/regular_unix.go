//go:build unix

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// NoFollow is the open flag that refuses a symlink in the last path
// element. Writers add it to every open of a file they create or append to.
const NoFollow = syscall.O_NOFOLLOW

// openRegular opens name read-only with flag, without waiting, and
// refuses anything but a regular file. It uses syscall.Open rather than
// os.OpenFile: os.OpenFile would also try to register the descriptor with
// the network poller, which for a regular file costs four fcntl calls and
// a failing epoll_ctl; listing thousands of small sessions spent more on
// those than on reading. Session files are regular files, read with
// blocking calls.
func openRegular(name string, flag int) (*os.File, error) {
	fd, _, err := openRegularFd(name, flag)
	if err != nil {
		return nil, err
	}
	if flag&syscall.O_NONBLOCK == 0 {
		// Of no effect on a regular file on most filesystems, but reads
		// must block as asked wherever it might matter.
		if err := clearNonblock(fd, flag); err != nil {
			_ = syscall.Close(fd)
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openRegularFd opens name with flag and O_NONBLOCK (left set), and
// returns its descriptor and fstat when it is a regular file; anything
// else is closed again and refused with an error naming it.
func openRegularFd(name string, flag int) (int, *syscall.Stat_t, error) {
	var fd int
	for {
		var err error
		fd, err = syscall.Open(name, flag|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ENXIO {
			// A socket cannot be opened (nor a device without its
			// driver): say what it is, not "no such device or address".
			var st syscall.Stat_t
			if syscall.Stat(name, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				err = ErrNotRegular
			}
		}
		if err != nil {
			return -1, nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		break
	}
	fail := func(err error) (int, *syscall.Stat_t, error) {
		_ = syscall.Close(fd)
		return -1, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(fd, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail(err)
		}
		break
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return fail(syscall.EISDIR)
	default:
		return fail(ErrNotRegular)
	}
	return fd, &st, nil
}
