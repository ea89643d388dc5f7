package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"iter"
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
			st, err := placeStore(e.ctx, p, engine.StoreOptions{})
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
		var stop error // ctx done: a failure, not a skipped file
		skip := func(err error) {
			if cerr := e.ctx.Err(); cerr != nil && errors.Is(err, cerr) {
				stop = err
				return
			}
			o.Warn(err)
		}
		seq := func(yield func(*engine.Info, error) bool) {
			for _, l := range jl {
				for in, err := range l.st.ListTexts(e.ctx, l.infos, o) {
					if !yield(in, err) {
						return
					}
				}
			}
		}
		if err := writeListJSON(e, render.ListJSONSeq(seq, skip), aus); err != nil {
			return e.fail(err)
		}
		if stop != nil {
			return e.fail(stop)
		}
		return code()
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

// writeListJSON writes the JSON array of parts (render.ListJSONSeq's)
// with the AgentUse sessions' elements added at its end. One part is
// held back, to close the array after them.
func writeListJSON(e *env, parts iter.Seq[[][]byte], aus []*agentuse.Info) error {
	var elems []byte
	if len(aus) > 0 {
		var b bytes.Buffer
		render.AgentUseListJSON(&b, aus)
		elems = bytes.TrimSuffix(bytes.TrimPrefix(b.Bytes(), []byte("[")), []byte("\n]\n"))
	}
	var held [][]byte
	for part := range parts {
		if held != nil {
			if err := writeBuffers(e.stdout, held); err != nil {
				return err
			}
		}
		held = slices.Clone(part)
		for i := range held {
			held[i] = bytes.Clone(held[i])
		}
	}
	if len(elems) > 0 {
		last := bytes.Join(held, nil)
		if bytes.Equal(last, []byte("[]\n")) {
			last = []byte("[")
		} else {
			last = append(bytes.TrimSuffix(last, []byte("\n]\n")), ',')
		}
		held = [][]byte{last, elems, []byte("\n]\n")}
	}
	return writeBuffers(e.stdout, held)
}
