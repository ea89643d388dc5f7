package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/tree"
)

// This file holds what fork, branch, compact, label, name and delete share:
// naming an entry by id or unique prefix, with suggestions when it does not
// exist, and flags that may follow the positional arguments.

// parseArgs parses args allowing flags after positional arguments
// ("sessctl fork SESSION --at ID"), which the flag package alone stops at.
// An argument "--" ends the flags: everything after it is positional, so a
// TEXT that starts with "-" can be given as "-- -text". It returns the
// positional arguments and -1, or the exit code to return.
func (e *env) parseArgs(c *command, fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if code := e.parse(c, fs, args); code >= 0 {
			return nil, code
		}
		rest := fs.Args()
		// fs.Parse consumed a "--" if it came first; then all is positional.
		if len(args) > len(rest) && len(rest) > 0 && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), -1
		}
		i := 0
		for i < len(rest) && (!strings.HasPrefix(rest[i], "-") || rest[i] == "-") {
			i++
		}
		pos = append(pos, rest[:i]...)
		if i == len(rest) {
			return pos, -1
		}
		args = rest[i:]
	}
}

// entryError is an entry id that names no entry, or several; it lists the
// ids the user may have meant.
type entryError struct {
	arg         string
	suggestions []string
	ambiguous   bool
}

func (e *entryError) Error() string {
	var b strings.Builder
	if e.ambiguous {
		fmt.Fprintf(&b, "entry %q is ambiguous: it is a prefix of %s", e.arg, strings.Join(e.suggestions, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "entry %q not found", e.arg)
	if len(e.suggestions) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(e.suggestions, ", "))
	}
	return b.String()
}

// Unwrap makes an unknown entry match engine.ErrNotFound (exit 5) and an
// ambiguous prefix errAmbiguous (exit 2).
func (e *entryError) Unwrap() error {
	if e.ambiguous {
		return errAmbiguous
	}
	return engine.ErrNotFound
}

// maxSuggestions bounds the ids an entryError lists.
const maxSuggestions = 5

// lookupEntry resolves an entry id or a unique (case-insensitive) prefix
// of one in s. An unknown id fails with an *entryError suggesting the ids
// within a small edit distance; a prefix of several ids fails listing them.
func lookupEntry(s *engine.Session, arg string) (string, error) {
	if arg == "" {
		return "", &entryError{arg: arg}
	}
	if _, ok := s.Entry(arg); ok {
		return arg, nil
	}
	var ids []string
	s.Index(func(ix *tree.Index) {
		for _, k := range ix.IDs() {
			if k != "" && k[0] >= 0x20 { // string ids only
				ids = append(ids, k)
			}
		}
	})
	low := strings.ToLower(arg)
	var prefixed []string
	for _, id := range ids {
		if strings.HasPrefix(strings.ToLower(id), low) {
			prefixed = append(prefixed, id)
		}
	}
	switch {
	case len(prefixed) == 1:
		return prefixed[0], nil
	case len(prefixed) > 1:
		slices.Sort(prefixed)
		if len(prefixed) > maxSuggestions {
			prefixed = append(prefixed[:maxSuggestions], "...")
		}
		return "", &entryError{arg: arg, suggestions: prefixed, ambiguous: true}
	}
	return "", &entryError{arg: arg, suggestions: closeIDs(arg, ids)}
}

// closeIDs returns the ids within edit distance 2 of arg (1 for short
// args), nearest first, at most maxSuggestions.
func closeIDs(arg string, ids []string) []string {
	limit := 2
	if len(arg) < 5 {
		limit = 1
	}
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	low := strings.ToLower(arg)
	for _, id := range ids {
		// Compare with the id cut to the argument's length too, so a
		// mistyped prefix still finds its id.
		d := editDistance(low, strings.ToLower(id))
		if len(id) > len(arg) {
			d = min(d, editDistance(low, strings.ToLower(id[:len(arg)])))
		}
		if d <= limit {
			cs = append(cs, cand{id, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.id, b.id)
	})
	var out []string
	for i, c := range cs {
		if i == maxSuggestions {
			break
		}
		out = append(out, c.id)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// failEntry reports an entry lookup error with a hint that fits it.
func (e *env) failEntry(err error, sessionArg string) int {
	fmt.Fprintf(e.stderr, "sessctl: %s: %v\n", e.name, err)
	fmt.Fprintf(e.stderr, "hint: 'sessctl tree %s' shows the entry ids\n", sessionArg)
	return exitCode(err)
}

// jsonOut writes one JSON object and a newline.
func jsonOut(w io.Writer, obj []byte) {
	w.Write(obj)
	io.WriteString(w, "\n")
}

// strList renders a list for human output: "a, b" or "(none)".
func strList(ss []string) string {
	if len(ss) == 0 {
		return "(none)"
	}
	return strings.Join(ss, ", ")
}
