//go:build windows

package lock

import (
	"errors"
	"io/fs"
	"syscall"
)

const (
	oNoFollow = 0 // Windows opens do not follow symbolic links by this flag; see isSymlink checks
	oNonBlock = 0
)

const (
	processQueryLimitedInformation = 0x1000
	stillActive                    = 259
	errorInvalidParameter          = syscall.Errno(87)
)

// pidAlive reports whether a process with this pid exists. Access denied
// means it exists; only "invalid parameter" proves that it is gone.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, errorInvalidParameter)
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// linkCount is not available through os.FileInfo on Windows.
func linkCount(fs.FileInfo) uint64 { return 1 }

// isNoLock reports whether err says the file system cannot lock at all.
func isNoLock(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EWINDOWS)
}

// syncDir is a no-op: Windows cannot open a directory for syncing through
// package os, and NTFS journals renames.
func syncDir(string) error { return nil }
