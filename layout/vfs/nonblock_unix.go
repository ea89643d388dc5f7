//go:build unix && !linux

package vfs

import "syscall"

// clearNonblock clears O_NONBLOCK on fd.
func clearNonblock(fd, _ int) error { return syscall.SetNonblock(fd, false) }
