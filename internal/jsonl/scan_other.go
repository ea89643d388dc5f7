//go:build !amd64 || purego

package jsonl

// useAVX2 is false where there is no assembly string scan.
const useAVX2 = false

// scanStringAVX2 is never called without the assembly.
func scanStringAVX2(b []byte, i int, canon bool) int { return -1 }

// nextSpecialAVX2 is never called without the assembly.
func nextSpecialAVX2(b []byte, i int) int { return i }
