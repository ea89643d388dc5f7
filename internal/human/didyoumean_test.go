package human

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"json", "full", "leaf", "store", "summary", "summary-cmd", "summary-file", "o"}
	for _, tc := range []struct{ typed, want string }{
		{"jsn", "json"},   // a letter left out
		{"josn", "json"},  // two swapped
		{"jsonn", "json"}, // one too many
		{"ful", "full"},   // the only flag it begins
		{"summary-c", "summary-cmd"},
		{"summ", "summary"}, // begins three: the nearest, one of them
		{"stroe", "store"},
		{"no-such-flag", ""}, // nothing near
		{"x", ""},            // one letter: no edit
		{"xyz", ""},
		{"j", "json"}, // a prefix, however short
		{"", ""},
	} {
		if got := DidYouMean(tc.typed, known); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"json", "json", 0}} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
