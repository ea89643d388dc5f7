//go:build linux || darwin

package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// writeFileBuffers writes bufs to f with writev, so thousands of pieces
// cost a few system calls instead of one each, without copying them
// together.
func writeFileBuffers(f *os.File, bufs [][]byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(bufs) > 0 {
			n, err := unix.Writev(int(fd), bufs[:min(len(bufs), 1024)])
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return false // wait until the descriptor takes more
			case err != nil:
				werr = &os.PathError{Op: "write", Path: f.Name(), Err: err}
				return true
			}
			bufs = consumed(bufs, n)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}

// consumed drops the first n bytes of bufs.
func consumed(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if len(bufs) > 0 && n > 0 {
		bufs[0] = bufs[0][n:]
	}
	return bufs
}
