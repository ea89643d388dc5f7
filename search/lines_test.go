package search

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEachLine: eachLine gives the lines of a range as splitting it at
// its newlines does, whatever the chunk size beside the lines (lines
// longer than a chunk, a last line without its newline, a range that
// starts inside the data), and stops when told.
func TestEachLine(t *testing.T) {
	defer func(n int) { readChunk = n }(readChunk)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var data []byte
		for range r.IntN(20) {
			data = append(data, bytes.Repeat([]byte{'a' + byte(r.IntN(26))}, r.IntN(100))...)
			data = append(data, '\n')
		}
		if r.IntN(2) == 0 {
			data = append(data, "tail"...)
		}
		from := int64(0)
		if len(data) > 0 && r.IntN(3) == 0 {
			from = int64(bytes.IndexByte(data, '\n') + 1)
		}
		readChunk = 1 + r.IntN(64)
		type got struct {
			Off  int64
			Line string
			Term bool
		}
		var want, have []got
		off := from
		for _, l := range bytes.SplitAfter(data[from:], []byte("\n")) {
			if len(l) > 0 {
				want = append(want, got{off, string(l), l[len(l)-1] == '\n'})
				off += int64(len(l))
			}
		}
		var buf []byte
		err := eachLine(bytes.NewReader(data), from, int64(len(data)), &buf, func(off int64, line []byte, term bool) (bool, error) {
			have = append(have, got{off, string(line), term})
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("round %d (chunk %d, from %d) (-want +got):\n%s", round, readChunk, from, diff)
		}
		if len(want) > 1 {
			n := 0
			eachLine(bytes.NewReader(data), from, int64(len(data)), &buf, func(int64, []byte, bool) (bool, error) {
				n++
				return false, nil
			})
			if n != 1 {
				t.Fatalf("round %d: %d lines after being told to stop", round, n)
			}
		}
	}
}
