package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncDir flushes the directory name to stable storage with F_FULLFSYNC,
// falling back to fsync where the filesystem does not support it (see
// fullSync). Plain fsync on macOS only hands the data to the drive, whose
// cache a power cut empties.
func syncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	fd := int(d.Fd())
	err = fullSync(
		func() error { _, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0); return err },
		func() error { return unix.Fsync(fd) },
	)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
