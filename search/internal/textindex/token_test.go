package textindex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tokenizeRef is the tokenizer as it was before it built terms in place
// in an array: the faster one must cut the same terms.
func tokenizeRef(text string, buf []byte, fn func(term []byte)) {
	tok := buf[:0]
	in := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if f := asciiFold[c]; f != 0 {
				in = true
				if len(tok) < MaxTermLen {
					tok = append(tok, f)
				}
				continue
			}
			if in {
				fn(tok)
				tok, in = tok[:0], false
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		f := foldRune(r)
		if f < 0 {
			if in {
				fn(tok)
				tok, in = tok[:0], false
			}
			continue
		}
		in = true
		if f == 0 {
			continue
		}
		if len(tok)+utf8.RuneLen(f) <= MaxTermLen {
			tok = utf8.AppendRune(tok, f)
		}
	}
	if in {
		fn(tok)
	}
}

// TestTokenizeSameAsReference compares the tokenizer with tokenizeRef
// on random mixes of ASCII, Latin letters with diacritics, combining
// marks, other scripts, invalid UTF-8, separators and runs longer than
// MaxTermLen.
func TestTokenizeSameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	parts := []string{"a", "Z", "9", " ", ".", "_", "-", "\n", "é", "É", "\u0301", "ж", "世", "🙂", "ß", "İ", "\x80", "\xff",
		strings.Repeat("x", 130), strings.Repeat("ab", 70), strings.Repeat("ж", 70), "Hello", "WORLD42"}
	for range 5000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		text := b.String()
		var got, want []string
		var buf [MaxTermLen + utf8.UTFMax]byte
		tokenize(text, buf[:0], func(tk []byte) { got = append(got, string(tk)) })
		tokenizeRef(text, buf[:0], func(tk []byte) { want = append(want, string(tk)) })
		if !slices.Equal(got, want) {
			t.Fatalf("tokenize(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"  func parseEntry(ctx context.Context) error {", []string{"func", "parseentry", "ctx", "context", "context", "error"}},
		{"café CAFÉ Ærøskøbing naïve Łódź", []string{"cafe", "cafe", "ærøskøbing", "naive", "łodz"}},
		{"e\u0301t\u00e9", []string{"ete"}}, // a decomposed accent is dropped
		{"snake_case kebab-case dotted.name 3.14", []string{"snake", "case", "kebab", "case", "dotted", "name", "3", "14"}},
		{"Привет МИР 世界 ٣٤", []string{"привет", "мир", "世界", "٣٤"}},
		{"emoji 🙂 between", []string{"emoji", "between"}},
		{"", nil},
		{"---", nil},
	} {
		if got := Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTokenizeCutsLongTerms(t *testing.T) {
	long := strings.Repeat("ab", 200)
	got := Terms("x " + long + " y")
	if len(got) != 3 || len(got[1]) != MaxTermLen || got[1] != long[:MaxTermLen] {
		t.Fatalf("Terms cut %d bytes to %q", len(long), got)
	}
	// Multi-byte runes are never split.
	if got = Terms(strings.Repeat("é", 100)); !slices.Equal(got, []string{strings.Repeat("e", 100)}) {
		t.Fatalf("got %q", got)
	}
	got = Terms(strings.Repeat("ж", 100))
	if len(got) != 1 || len(got[0]) != MaxTermLen || !strings.HasPrefix(strings.Repeat("ж", 100), got[0]) {
		t.Fatalf("got %q (%d bytes)", got, len(got[0]))
	}
}

func TestLatinBaseTable(t *testing.T) {
	if len(latinBase) != 0x180-0xe0 {
		t.Fatalf("latinBase has %d entries, want %d", len(latinBase), 0x180-0xe0)
	}
	for r, want := range map[rune]rune{'à': 'a', 'ç': 'c', 'ñ': 'n', 'ÿ': 'y', 'ø': 'ø', 'ß': 'ß', 'ā': 'a', 'č': 'c', 'ď': 'd', 'đ': 'đ',
		'ě': 'e', 'ğ': 'g', 'ħ': 'ħ', 'ı': 'ı', 'İ': 'i', 'ĵ': 'j', 'ķ': 'k', 'ĸ': 'ĸ', 'ľ': 'l', 'ł': 'ł', 'ň': 'n', 'ŉ': 'ŉ', 'ő': 'o', 'œ': 'œ',
		'ř': 'r', 'š': 's', 'ť': 't', 'ŧ': 'ŧ', 'ů': 'u', 'ų': 'u', 'ŵ': 'w', 'ŷ': 'y', 'Ÿ': 'y', 'ž': 'z', 'ſ': 'ſ'} {
		if got := foldRune(r); got != want {
			t.Errorf("fold(%q) = %q, want %q", r, got, want)
		}
	}
}
