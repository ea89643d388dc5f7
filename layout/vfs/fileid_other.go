//go:build !unix

package vfs

import "io/fs"

// FileID is 0 where the platform's stat has no inode: a cache keyed by a
// path then tells a replaced file by its size, time and content checks.
func FileID(fs.FileInfo) uint64 { return 0 }
