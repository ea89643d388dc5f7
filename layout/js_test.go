package layout

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// layout keeps its own copies of the codec's JavaScript trim and
// toISOString, so that it imports nothing but the standard library; they
// must agree with the codec's on every input.
func TestJSPiecesAgreeWithTheCodec(t *testing.T) {
	for r := rune(0); r <= 0x10FFFF; r++ {
		if isJSWhitespace(r) != jsonl.IsJSWhitespace(r) {
			t.Fatalf("isJSWhitespace(%U) = %v, the codec says %v", r, isJSWhitespace(r), jsonl.IsJSWhitespace(r))
		}
	}
	for _, s := range []string{"", " ", "\u3000a b\u2028", "\ufeff\t/x/y \n", "x"} {
		if jsTrim(s) != jsonl.JSTrim(s) {
			t.Errorf("jsTrim(%q) = %q, the codec says %q", s, jsTrim(s), jsonl.JSTrim(s))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{time.Unix(0, 0), time.UnixMilli(-1), time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))}
	for range 10000 {
		times = append(times, time.UnixMilli(rng.Int64N(2*8.64e15)-8.64e15).In(time.FixedZone("z", rng.IntN(50000)-25000)))
	}
	for _, tm := range times {
		if got, want := isoTime(tm), jsonl.ISOTime(tm); got != want {
			t.Fatalf("isoTime(%v) = %s, the codec says %s", tm, got, want)
		}
	}
}
