package human

import "testing"

func TestQuotePath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"/home/dev/s.jsonl", "/home/dev/s.jsonl"},
		{"/home/dev/with space/ünï.jsonl", "/home/dev/with space/ünï.jsonl"},
		{"/tmp/a\nb.jsonl", `"/tmp/a\nb.jsonl"`},
		{"/tmp/\x1b[31mred.jsonl", `"/tmp/\x1b[31mred.jsonl"`},
		{"/tmp/c1\u0085.jsonl", `"/tmp/c1\u0085.jsonl"`},
		{"/tmp/bad\xff.jsonl", `"/tmp/bad\xff.jsonl"`},
		{`"quoted"`, `"\"quoted\""`},
	}
	for _, tc := range cases {
		if got := QuotePath(tc.in); got != tc.want {
			t.Errorf("QuotePath(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestShortText(t *testing.T) {
	cases := []struct{ got, want string }{
		{Plural(1, "entry", "entries"), "1 entry"},
		{Plural(0, "entry", "entries"), "0 entries"},
		{Plural(12, "line", "lines"), "12 lines"},
		{CutRunes("short", 10), "short"},
		{CutRunes("ünïcödé text here", 10), "ünïcödé..."},
		{OneLine("  a\n\tb   c ", 80), "a b c"},
		{OneLine("abcdef", 4), "abc…"},
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
