package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// This file holds what fork, branch, compact, label, name and delete share:
// flags that may follow the positional arguments, and the hint for an
// entry that engine.Session.ResolveEntry could not find.

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
