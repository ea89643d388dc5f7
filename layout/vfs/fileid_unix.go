//go:build unix

package vfs

import (
	"io/fs"
	"syscall"
)

// FileID returns a number that tells one file from another (its inode
// and device), so that a cache keyed by a path notices a file replaced
// by another of the same size and time; 0 where it is unknown.
func FileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) ^ uint64(st.Dev)<<48
	}
	return 0
}
