package human

import "strings"

// DidYouMean returns the word of known that typed, a mistyped word, most
// likely meant: of those typed is a prefix of, the nearest; else the
// nearest by edit distance (insertions, deletions, substitutions and
// swaps of neighbours) within a third of typed's length. The
// first of known wins a tie; "" when none is that near.
func DidYouMean(typed string, known []string) string {
	if typed == "" {
		return ""
	}
	best, bestD, prefixed := "", len(typed)/3+1, false
	for _, k := range known {
		d, p := EditDistance(typed, k), strings.HasPrefix(k, typed)
		if p && !prefixed || d < bestD && p == prefixed {
			best, bestD, prefixed = k, d, p
		}
	}
	return best
}

// EditDistance is the optimal string alignment distance of a and b, in
// bytes: how many insertions, deletions, substitutions and swaps of
// neighbouring bytes turn a into b.
func EditDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
