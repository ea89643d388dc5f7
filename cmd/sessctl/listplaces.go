package main

import (
	"bufio"
	"fmt"
	"slices"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout"
)

// listPlaces is `sessctl list --store DIR` (or --store all): every
// session of every place, of both formats. The JSONL sessions come
// first, as `list --all` shows them; the AgentUse sessions (top-level)
// follow in AgentUse's table. With --json it is one array: the JSONL
// sessions' elements, then the AgentUse sessions' (the elements with
// "dir" in place of "path").
func listPlaces(e *env, places []layout.Place, o engine.ListOptions, asJSON bool, skipped *int) int {
	type listed struct {
		st    *engine.Store
		infos []engine.Info
	}
	var jl []listed
	var every []engine.Info
	var aus []*agentuse.Info
	for _, p := range places {
		switch p.Format {
		case layout.FormatJSONL:
			st, err := engine.OpenPlace(e.ctx, p, engine.StoreOptions{})
			if err != nil {
				return e.fail(err)
			}
			infos, err := st.List(e.ctx, "", o)
			if err != nil {
				return e.fail(err)
			}
			jl = append(jl, listed{st, infos})
			every = append(every, infos...)
		case layout.FormatAgentUse:
			st, err := agentuse.OpenStore(e.ctx, agentuse.StoreOptions{Dir: p.Root})
			if err != nil {
				return e.fail(err)
			}
			list, err := st.List(e.ctx, agentuse.ListOptions{Warn: o.Warn})
			_ = st.Close()
			if err != nil {
				return e.fail(err)
			}
			aus = append(aus, list...)
		}
	}
	code := func() int {
		if *skipped > 0 {
			return exitFailure
		}
		return exitOK
	}
	if asJSON {
		seq := func(yield func(*engine.Info, error) bool) {
			for _, l := range jl {
				for in, err := range l.st.ListTexts(e.ctx, l.infos, o) {
					if !yield(in, err) {
						return
					}
				}
			}
		}
		return printListJSON(e, seq, aus, o.Warn, skipped)
	}
	if len(every) == 0 && len(aus) == 0 {
		fmt.Fprintln(e.stderr, "no sessions")
		return code()
	}
	slices.SortStableFunc(every, func(a, b engine.Info) int { return b.Modified.Compare(a.Modified) })
	w := bufio.NewWriter(e.stdout)
	_ = render.ListIn(w, every, every) // a write error stays in w: Flush reports it
	if len(aus) > 0 {
		if len(every) > 0 {
			fmt.Fprintln(w)
		}
		render.AgentUseList(w, aus)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return code()
}
