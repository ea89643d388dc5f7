package main

import (
	"fmt"
	"io"
	"time"
)

// progress draws "label done/total" on a terminal, at most ten times a
// second, and nothing at all when w is not a terminal: scripts and logs
// get only the requested output.
type progress struct {
	w     io.Writer
	label string
	total int
	last  time.Time
	shown bool
}

// newProgress returns a progress line on w when w is a terminal, or a
// silent one.
func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: terminal(w), label: label, total: total}
}

// isTerminal reports whether w is a terminal: a file the terminal
// driver answers for (isTTY), not merely a character device, which
// /dev/null is too, or the escaping writer main makes for one.
func isTerminal(w io.Writer) bool { return terminal(w) != nil }

// update shows done of total.
func (p *progress) update(done int) {
	if p.w == nil || time.Since(p.last) < 100*time.Millisecond && done < p.total {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.w, "\r%s %d/%d", p.label, done, p.total)
}

// done clears the line.
func (p *progress) done() {
	if p.w != nil && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
