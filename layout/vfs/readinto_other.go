//go:build !linux

package vfs

import "io/fs"

const rawReadInto = false

// readIntoRaw is never called here: ReadInto goes through OpenFile.
func readIntoRaw(string, []byte) ([]byte, fs.FileInfo, error) {
	panic("vfs: readIntoRaw without a raw implementation")
}
