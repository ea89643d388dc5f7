package jsonl

import (
	"math/rand/v2"
	"testing"
)

// TestNextStopFindsFirstStopByte compares the word-at-a-time scan with a
// byte loop on random inputs dense in bytes next to the stop classes, at
// every start offset, so a match in any lane of either word (and a borrow
// from one lane into the next) is exercised.
func TestNextStopFindsFirstStopByte(t *testing.T) {
	t.Parallel()
	alphabet := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff, 'a'}
	naive := func(b []byte, i int, high bool) int {
		for ; i < len(b); i++ {
			if strClass[b[i]] || (high && b[i] >= 0x80) {
				return i
			}
		}
		return len(b)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		b := make([]byte, r.IntN(40))
		for k := range b {
			if r.IntN(4) == 0 {
				b[k] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[k] = 'a' + byte(r.IntN(26))
			}
		}
		for i := 0; i <= len(b); i++ {
			if got, want := nextSpecial(b, i), naive(b, i, false); got != want {
				t.Fatalf("nextSpecial(%q, %d) = %d, want %d", b, i, got, want)
			}
			if got, want := nextSpecialOrHigh(b, i), naive(b, i, true); got != want {
				t.Fatalf("nextSpecialOrHigh(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}
