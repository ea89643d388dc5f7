package main

import (
	"fmt"
	"github.com/sessctl/sessctl/internal/human"
	"io"
	"strings"
)

// This file holds what fork, branch, compact, label, name and delete share:
// the hint for an entry that engine.Session.ResolveEntry could not find,
// and small output helpers.

// failEntry reports an entry lookup error with a hint that fits it.
func (e *env) failEntry(err error, sessionArg string) int {
	fmt.Fprintf(e.stderr, "sessctl: %s: %v\n", e.name, err)
	fmt.Fprintf(e.stderr, "hint: 'sessctl tree %s' shows the entry ids\n", human.ShellQuote(sessionArg))
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
