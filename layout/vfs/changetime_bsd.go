//go:build darwin || freebsd || netbsd

package vfs

import (
	"io/fs"
	"syscall"
)

// ChangeTime returns the inode's change time of a stat in nanoseconds
// (0 where it is unknown): any write or metadata change sets it, and no
// program can set it back, so that a cache keyed by a path notices a file
// rewritten in place with its size and modification time restored.
func ChangeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
