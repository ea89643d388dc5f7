//go:build !linux

package vfs

import "time"

const rawReadInto = false

// readIntoRaw is never called here: ReadInto goes through OpenFile.
func readIntoRaw(string, []byte) ([]byte, int64, time.Time, error) {
	panic("vfs: readIntoRaw without a raw implementation")
}
