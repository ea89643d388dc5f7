package main

import (
	"bufio"
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout"
)

// listPlaces is `sessctl list --store DIR` (or --store all): every
// session of every place, of both formats (render.ListPlaces). With
// --json it is one array: the JSONL sessions' elements, then the
// AgentUse sessions' (the elements with "dir" in place of "path").
func listPlaces(e *env, places []layout.Place, o engine.ListOptions, asJSON bool, skipped *int) int {
	l, err := render.ListPlaces(e.ctx, places, o)
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		return printListJSON(e, l.Texts(e.ctx, o), l.AgentUse, o.Warn, skipped)
	}
	if l.Empty() {
		fmt.Fprintln(e.stderr, "no sessions")
	}
	w := bufio.NewWriter(e.stdout)
	_ = l.WriteText(w) // a write error stays in w: Flush reports it
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if *skipped > 0 {
		return exitFailure
	}
	return exitOK
}
