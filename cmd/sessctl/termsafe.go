package main

import (
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/term"
)

// pathList renders paths for one line of human output: "a, b" (each
// quoted when needed) or "(none)".
func pathList(ps []string) string { return strList(quotePaths(ps)) }

// quotePaths returns the paths, each quoted when needed (human.QuotePath).
func quotePaths(ps []string) []string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = human.QuotePath(p)
	}
	return q
}

// Everything sessctl prints for people shows a control character one way,
// human.AppendControl's \u001b: in text quoted by human.Quote (paths and
// names in line-oriented output, wherever they go) and on a terminal,
// where a term.Escaper escapes what commands write to standard output and
// standard error.

// termEscape returns s as a terminal shows it (term.Escape).
func termEscape(s string) string { return term.Escape(s) }
