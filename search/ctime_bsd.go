//go:build darwin || freebsd || netbsd

package search

import (
	"io/fs"
	"syscall"
)

// ctime returns the inode's change time in nanoseconds (0 when unknown):
// any write or metadata change sets it, and no program can set it back.
func ctime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
