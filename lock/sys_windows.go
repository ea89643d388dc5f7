//go:build windows

package lock

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
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

// openRead opens path for reading with delete sharing, so that a holder
// can remove or replace an owner record or fallback file while another
// process reads it (os.Open would make that fail with a sharing
// violation, and a waiter polling the record would keep its holder from
// ever removing it).
func openRead(path string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ,
		syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// replaceFile renames tmp over path (MoveFileEx), retrying for up to a
// second while Windows refuses because another process has path open:
// MoveFileEx replaces no open file, and another process's Acquire or
// Inspect reads the owner record for a moment. The record is rewritten
// only by the lock's holder, so the retries wait for readers alone.
func replaceFile(tmp, path string) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := os.Rename(tmp, path)
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, syscall.Errno(32))) { // ERROR_SHARING_VIOLATION
			return err
		}
		time.Sleep(time.Millisecond)
	}
}
