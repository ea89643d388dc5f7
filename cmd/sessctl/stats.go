package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var statsCommand = &command{
	name:    "stats",
	summary: "count messages, tokens and cost of a session, per model",
	usage: `
Usage: sessctl stats [--json] SESSION
       sessctl stats --all [--store STORE] [--json]

Counts a session's entries by type, its messages by role, and the tokens
and cost the assistant messages report in their "usage" (input, output,
cache read, cache write, total; cost in dollars as the provider priced
it), in total and per model ("provider/model"). Every number is given
twice: over every entry in the file (all branches, including abandoned
ones), and over the active branch (root to leaf). A usage without
totalTokens counts input + output + cacheRead + cacheWrite; a cost without
a total counts the sum of its parts.

--all adds up every session file under the store (--store pi, indusagi
or a directory; every *.jsonl file, recursively, but not the deleted
sessions in its .trash directory), over all entries.

--json prints one object:

  {"path": FILE, "id": ID, "name": NAME, "leaf": ID,
   "all": SCOPE, "branch": SCOPE}

and with --all: {"store": DIR, "sessions": N, "skipped": N, "all": SCOPE}.
A SCOPE is

  {"entries": N, "types": {TYPE: N}, "messages": N, "roles": {ROLE: N},
   "usage": USAGE, "models": [{"model": "provider/model", "provider": P,
   "modelId": M, "messages": N, "usage": USAGE}]}

and a USAGE is {"input", "output", "cacheRead", "cacheWrite",
"totalTokens", "cost": {"input", "output", "cacheRead", "cacheWrite",
"total"}}. "name" and "leaf" are null when the session has none; models
are sorted by total tokens, then by name.

SESSION is a file path, a session id or a unique id prefix (see --store).
Files are read without a lock and never written.

Examples:
  sessctl stats 390d8e15
  sessctl stats --json session.jsonl | jq .branch.usage.cost.total
  sessctl stats --all
`,
}

func init() { register(statsCommand).run = runStats }

func runStats(e *env, args []string) int {
	fs := e.flags(statsCommand)
	store := storeFlag(fs)
	all := fs.Bool("all", false, "add up every session in the store")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(statsCommand, fs, args); code >= 0 {
		return code
	}
	if *all {
		if fs.NArg() != 0 {
			return e.usageError("--all takes no SESSION")
		}
		return statsAll(e, *store, *asJSON)
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	sv, err := openView(e, *store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	var branch []*jsonl.Entry
	if sv.Leaf != "" {
		branch = sv.s.BranchPath("")
	}
	rep := render.SessionStats{
		Path:   sv.Path,
		ID:     sv.Header.ID,
		All:    stats.Count(sv.Entries),
		Branch: stats.Count(branch),
	}
	if sv.HasName {
		rep.Name = &sv.Name
	}
	if sv.Leaf != "" {
		rep.Leaf = &sv.Leaf
	}
	w := bufio.NewWriter(e.stdout)
	if *asJSON {
		emitJSON(w, rep)
	} else {
		render.SessionStatsText(w, &rep)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// statsAll adds up every session file of a store.
func statsAll(e *env, store string, asJSON bool) int {
	root, err := storeRoot(store)
	if err != nil {
		return e.fail(err)
	}
	total, err := stats.Dir(e.ctx, root, stats.DirOptions{
		Skip: func(p string, err error) {
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: %v\n", p, err)
		},
		Header: e.warnVersion,
	})
	if err != nil {
		return e.fail(err)
	}
	rep := &render.StoreStats{Store: root, Sessions: total.Sessions, Skipped: total.Skipped, All: total.All}
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		emitJSON(w, rep)
	} else {
		render.StoreStatsText(w, rep)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// writeJSON writes v as indented JSON without HTML escaping.
func emitJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
