package vfs

import (
	"io"
	"io/fs"
	"syscall"
	"time"
)

const rawReadInto = true

// readIntoRaw is ReadInto on the real filesystem, with system calls and
// no *os.File: the file is opened without waiting (O_NONBLOCK, so that a
// named pipe does not block), checked to be regular by the fstat that
// gives its size and time, and read with the flag still set, which a
// regular file ignores; should a read still answer EAGAIN, the flag is
// cleared and the read made again.
func readIntoRaw(name string, buf []byte) ([]byte, int64, time.Time, error) {
	fail := func(op string, err error) ([]byte, int64, time.Time, error) {
		return buf, 0, time.Time{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	var fd int
	for {
		var err error
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("open", err)
		}
		break
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(fd, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("stat", err)
		}
		break
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return fail("open", syscall.EISDIR)
	default:
		return fail("open", ErrNotRegular)
	}
	cleared := false
	data, err := readUpTo(func(p []byte) (int, error) {
		for {
			n, err := syscall.Read(fd, p)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN && !cleared:
				if err := clearNonblock(fd, syscall.O_RDONLY); err != nil {
					return 0, err
				}
				cleared = true
				continue
			case err != nil:
				return 0, err
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}, buf, st.Size)
	if err != nil {
		return fail("read", err)
	}
	return data, st.Size, time.Unix(st.Mtim.Unix()), nil
}
