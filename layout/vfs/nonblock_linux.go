package vfs

import "syscall"

// clearNonblock sets the status flags of fd, opened with flag and
// O_NONBLOCK, back to flag: one fcntl instead of SetNonblock's two (F_SETFL
// ignores the access mode and creation flags in flag).
func clearNonblock(fd, flag int) error {
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, uintptr(flag))
	if errno != 0 {
		return errno
	}
	return nil
}
