//go:build !unix

package search

import "io/fs"

// fileID is 0 where the platform has no inode in its stat: a replaced
// file is then noticed by its size, time and last indexed line only.
func fileID(fs.FileInfo) uint64 { return 0 }
