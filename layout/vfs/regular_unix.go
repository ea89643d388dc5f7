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
	var fd int
	for {
		var err error
		fd, err = syscall.Open(name, flag|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		break
	}
	fail := func(err error) (*os.File, error) {
		_ = syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
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
	if flag&syscall.O_NONBLOCK == 0 {
		// Of no effect on a regular file on most filesystems, but reads
		// must block as asked wherever it might matter.
		if err := clearNonblock(fd, flag); err != nil {
			return fail(err)
		}
	}
	return os.NewFile(uintptr(fd), name), nil
}
