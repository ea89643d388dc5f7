//go:build amd64 && !purego

package jsonl

import "golang.org/x/sys/cpu"

// useAVX2 selects scanStringAVX2 for the rest of a string after an
// escape (skipString: its first; canonStringEsc: each).
var useAVX2 = cpu.X86.HasAVX2

// scanStringAVX2 scans the body of a JSON string from b[i], a byte that is
// not escaped (skipString calls it at the string's first backslash), 32
// bytes at a time: it finds the escaped bytes of each block from the runs
// of backslashes (odd-length runs escape the byte after them, carried
// across blocks), checks that every escaped byte is one of "\/bfnrtu and
// that four hex digits follow each \u, and returns the index of the
// closing quote. It returns -1 when the string is not valid up to a
// closing quote or has none; skipString's byte scan then finds the error.
// It reads no byte outside b (the last block is copied to the stack) and
// needs len(b) >= 32.
//
// With canon it checks canonStringEsc's rules instead: \/ is an error too,
// and it also stops, returning their index, at bytes >= 0x80 and at the
// backslash of each \u, which canonStringEsc checks itself.
//
//go:noescape
func scanStringAVX2(b []byte, i int, canon bool) int

// nextSpecialAVX2 returns the index of the first '"', '\\' or control
// byte at or after b[i] found in whole 32-byte blocks, or, when those
// blocks hold none, the index of the first block that would run past the
// end of b (a scan of the rest must go on from there).
//
//go:noescape
func nextSpecialAVX2(b []byte, i int) int
