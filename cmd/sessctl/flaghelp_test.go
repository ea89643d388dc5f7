package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestFlagListsDashed checks every command's flag list names each flag
// as its usage lines do: --json with two dashes, only one-letter flags
// (-o, -n, -f) with one (issue 42, item 11: the lists printed -json under
// usage lines that said --json).
func TestFlagListsDashed(t *testing.T) {
	flagLine := regexp.MustCompile(`^  (-+)([A-Za-z][A-Za-z0-9-]*)`)
	for name := range commands {
		out, _, code := runCLI(t, "help", name)
		if code != exitOK {
			t.Fatalf("help %s: exit %d", name, code)
		}
		_, list, ok := strings.Cut(out, "\nFlags:\n")
		if !ok {
			continue
		}
		n := 0
		for _, line := range strings.Split(list, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			n++
			if want := dashed(m[2]); m[1]+m[2] != want {
				t.Errorf("help %s lists %q, want %s", name, line, want)
			}
		}
		if n == 0 {
			t.Errorf("help %s: a Flags section without flags:\n%s", name, list)
		}
	}
}

// TestMistypedFlag checks that a mistyped flag's error names the flag
// meant, and that a bad value's names the flag with its two dashes.
func TestMistypedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--jsn"}, "flag provided but not defined: -jsn; did you mean --json?"},
		{[]string{"show", "x", "--ful"}, "did you mean --full?"},
		{[]string{"compact", "--summary-cmnd", "true", "x"}, "did you mean --summary-cmd?"},
		{[]string{"tail", "--josn", "x"}, "did you mean --json?"},
		{[]string{"export", "--fromat", "md", "x"}, "did you mean --format?"},
		{[]string{"compact", "--wait", "10", "x"}, `invalid value "10" for flag --wait: a duration needs a unit`},
		{[]string{"tail", "x", "--store"}, "flag needs an argument: --store"},
	} {
		_, errOut, code := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
}
