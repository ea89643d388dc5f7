//go:build !linux

package lock

import "io/fs"

// fileWriters cannot tell outside Linux: there is no /proc to read.
func fileWriters(fs.FileInfo, []int) ([]Writer, bool) { return nil, false }
