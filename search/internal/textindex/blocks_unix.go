//go:build unix

package textindex

import "syscall"

const canMap = true

// mapMem maps n bytes of zeroed memory, or returns nil.
func mapMem(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

func unmapMem(b []byte) { _ = syscall.Munmap(b) }
