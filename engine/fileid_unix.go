//go:build unix

package engine

import (
	"io/fs"
	"syscall"
)

// fileID returns the inode and device of a file, so that a file replaced
// by another of the same size and time is noticed (0 where unknown).
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) ^ uint64(st.Dev)<<48
	}
	return 0
}
