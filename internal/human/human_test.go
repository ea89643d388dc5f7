package human

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuotePath(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"/home/dev/s.jsonl", "/home/dev/s.jsonl"},
		{"/home/dev/with space/ünï.jsonl", "/home/dev/with space/ünï.jsonl"},
		{"/tmp/a\nb.jsonl", `"/tmp/a\nb.jsonl"`},
		{"/tmp/\x1b[31mred.jsonl", `"/tmp/\u001b[31mred.jsonl"`},
		{"/tmp/c1\u0085.jsonl", `"/tmp/c1\u0085.jsonl"`},
		{"/tmp/bad\xff.jsonl", `"/tmp/bad\xff.jsonl"`},
		{`"quoted"`, `"\"quoted\""`},
		{"cr\r nul\x00 del\x7f tab\t back\\slash", `"cr\u000d nul\u0000 del\u007f tab\t back\\slash"`},
	}
	for _, tc := range cases {
		if got := QuotePath(tc.in); got != tc.want {
			t.Errorf("QuotePath(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestQuoteReadsBack checks that Quote's output is one line without
// control characters that reads back as the text with strconv.Unquote,
// and as JSON when the text is UTF-8, over random texts of plain and
// control characters, quotes, backslashes and broken UTF-8.
func TestQuoteReadsBack(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "ü", "日", " ", "\n", "\t", "\r", "\x00", "\x1b[2J", "\x7f", "\u0085", "\u009b", "\xff", "\xe6\x97", `"`, `\`, "\u2028", "\ufffd"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		q := Quote(s)
		if back, err := strconv.Unquote(q); err != nil || back != s {
			t.Fatalf("Quote(%q) = %s, which reads back as %q, %v", s, q, back, err)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal([]byte(q), &back); err != nil || back != s {
				t.Fatalf("Quote(%q) = %s, which reads as JSON %q, %v", s, q, back, err)
			}
		}
		if !PlainText(q[1:len(q)-1]) || strings.ContainsAny(q, "\n\t") {
			t.Fatalf("Quote(%q) = %q holds a control character", s, q)
		}
	}
}

// TestShellQuoteControls checks that a word holding a control character
// is quoted as Quote does, never with a raw newline inside shell quotes.
func TestShellQuoteControls(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/tmp/a\nb c": `"/tmp/a\nb c"`,
		"x\x1b[0m":    `"x\u001b[0m"`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestShortText(t *testing.T) {
	t.Parallel()
	cases := []struct{ got, want string }{
		{Plural(1, "entry", "entries"), "1 entry"},
		{Plural(0, "entry", "entries"), "0 entries"},
		{Plural(12, "line", "lines"), "12 lines"},
		{CutRunes("short", 10), "short"},
		{CutRunes("ünïcödé text here", 10), "ünïcödé..."},
		{OneLine("  a\n\tb   c ", 80), "a b c"},
		{OneLine("abcdef", 4), "abc…"},
		{OneLineName("  a  b ", 80), "a b"},
		{OneLineName("a\nb\x1b[2J", 80), `"a\nb\u001b[2J"`},
		{OneLineText("a\nb", 80), "a b"},
		{OneLineText("a\n\x1b]0;t\x07", 80), `"a \u001b]0;t\u0007"`},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KB"},
		{Bytes(3 << 20), "3.0 MB"},
		{Cost(0.00096), "$0.000960"},
		{Or("", "b"), "b"},
		{Or("a", "b"), "a"},
	}
	for i, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("case %d: %q, want %q", i, tc.got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a/b-c.jsonl": "a/b-c.jsonl",
		"":            "''",
		"it's here":   `'it'\''s here'`,
		"$HOME":       "'$HOME'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// oneLineWhole is OneLine as it was written first, folding all of s
// before cutting it: the oracle for TestOneLineReadsOnlyWhatItShows.
func oneLineWhole(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// TestOneLineReadsOnlyWhatItShows checks OneLine, which stops reading
// after the runes it shows, against folding the whole text first, on
// texts of words, ASCII and Unicode spaces, multi-byte runes and bytes
// that are not UTF-8, cut at every width around their length.
func TestOneLineReadsOnlyWhatItShows(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "bc", "ünï", "日本", " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "\xff", "\xe6\x97", "…", "\x85"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		for n := 1; n <= utf8.RuneCountInString(s)+2; n++ {
			if got, want := OneLine(s, n), oneLineWhole(s, n); got != want {
				t.Fatalf("OneLine(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
