package vfs

import (
	"errors"
	"syscall"
)

// fullSync runs full, a flush through the drive's cache to stable storage
// (F_FULLFSYNC on macOS), and falls back to plain, an fsync, when full is
// not supported where the file lives: ENOTSUP (SMB and some other network
// filesystems), EINVAL (a file type or filesystem that rejects the fcntl)
// or ENOTTY. Any other error of full is returned as it is, since falling
// back would report a weaker guarantee as success. EINTR is retried.
func fullSync(full, plain func() error) error {
	for {
		err := full()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOTTY):
			for {
				err := plain()
				if !errors.Is(err, syscall.EINTR) {
					return err
				}
			}
		default:
			return err
		}
	}
}
