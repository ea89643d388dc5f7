package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
)

// This file holds what fork, branch, compact, label, name, context-edit
// and delete share: opening a session at an entry, the hint for an entry
// that engine.Session.ResolveEntry could not find, and small output
// helpers.

// openEntry resolves the SESSION argument in store, opens the session for
// writing (as "sessctl <command>", waiting up to wait for its lock) and
// resolves the ENTRY argument in it. It returns the session and the
// entry's id, or the exit code of the failure it reported (-1 to go on).
func (e *env) openEntry(store, sessionArg, entryArg string, wait time.Duration) (*engine.Session, string, int) {
	path, err := resolveSession(store, sessionArg)
	if err != nil {
		return nil, "", e.fail(err)
	}
	s, err := openForWrite(e.ctx, path, wait, "sessctl "+e.name)
	if err != nil {
		return nil, "", e.fail(err)
	}
	target, err := s.ResolveEntry(entryArg)
	if err != nil {
		s.Close()
		return nil, "", e.failEntry(err, sessionArg)
	}
	return s, target, -1
}

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

// opt is v where ok, for jsonl.ObjectBuilder.StringOrNull: nil (null)
// where not.
func opt(v string, ok bool) *string {
	if !ok {
		return nil
	}
	return &v
}

// quotePaths returns the paths, each quoted when needed (human.QuotePath).
func quotePaths(ps []string) []string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = human.QuotePath(p)
	}
	return q
}
