//go:build windows

package lock

import (
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
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

// replaceFile renames tmp over path (MoveFileEx), retrying for up to a
// second while Windows refuses because another process has path open:
// MoveFileEx replaces no open file, and another process's Acquire or
// Inspect reads the owner record for a moment. The record is rewritten
// only by the lock's holder, so the retries wait for readers alone.
func replaceFile(fsys vfs.FS, tmp, path string) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := fsys.Rename(tmp, path)
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, syscall.Errno(32))) { // ERROR_SHARING_VIOLATION
			return err
		}
		time.Sleep(time.Millisecond)
	}
}
