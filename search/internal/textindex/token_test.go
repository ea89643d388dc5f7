package textindex

import (
	"slices"
	"strings"
	"testing"
)

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
