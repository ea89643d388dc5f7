package textindex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestTokenizeSpans: the terms are Tokenize's, and each span is the
// token's text: it tokenizes to the term alone, and the text between
// spans has no term.
func TestTokenizeSpans(t *testing.T) {
	alphabet := []string{"a", "B", "z", "9", " ", ".", "_", "é", "E\u0301", "\u0301", "ß", "Ω", "日", "\u00a0", "\ue000", "-", "\n", strings.Repeat("x", 130)}
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		var sb strings.Builder
		for range r.IntN(20) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		text := sb.String()
		var terms []string
		last := 0
		TokenizeSpans(text, func(term []byte, start, end int) {
			terms = append(terms, string(term))
			if start < last || end <= start {
				t.Fatalf("%q: span [%d,%d) after %d", text, start, end, last)
			}
			if got := Terms(text[start:end]); len(got) != 1 || got[0] != string(term) {
				t.Fatalf("%q: span %q tokenizes to %q, want [%q]", text, text[start:end], got, term)
			}
			if got := Terms(text[last:start]); len(got) != 0 {
				t.Fatalf("%q: terms %q between spans", text, got)
			}
			last = end
		})
		if want := Terms(text); !slices.Equal(terms, want) {
			t.Fatalf("%q: TokenizeSpans terms %q, Tokenize %q", text, terms, want)
		}
	}
}
