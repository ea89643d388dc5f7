//go:build darwin || linux || openbsd

package term

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// writeFile writes bufs to f with writev.
func writeFile(f *os.File, bufs [][]byte) error {
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
