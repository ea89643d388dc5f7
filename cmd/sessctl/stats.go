package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
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
	rep := statsReport{
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
		writeStatsText(w, &rep)
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
	sessions, skipped := total.Sessions, total.Skipped
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		emitJSON(w, struct {
			Store    string       `json:"store"`
			Sessions int          `json:"sessions"`
			Skipped  int          `json:"skipped"`
			All      *stats.Scope `json:"all"`
		}{root, sessions, skipped, total.All})
	} else {
		fmt.Fprintf(w, "Store     %s\n", human.QuotePath(root))
		fmt.Fprintf(w, "Sessions  %d", sessions)
		if skipped > 0 {
			fmt.Fprintf(w, " (%d files skipped)", skipped)
		}
		fmt.Fprintf(w, "\n\n")
		writeScopeTable(w, []string{"ALL"}, []*stats.Scope{total.All})
		writeModelTable(w, "Per model", total.All)
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

type statsReport struct {
	Path   string       `json:"path"`
	ID     string       `json:"id"`
	Name   *string      `json:"name"`
	Leaf   *string      `json:"leaf"`
	All    *stats.Scope `json:"all"`
	Branch *stats.Scope `json:"branch"`
}

func writeStatsText(w io.Writer, r *statsReport) {
	fmt.Fprintf(w, "Session  %s\n", human.QuotePath(r.ID))
	if r.Name != nil {
		fmt.Fprintf(w, "Name     %s\n", human.OneLine(*r.Name, 100))
	}
	fmt.Fprintf(w, "File     %s\n", human.QuotePath(r.Path))
	if r.Leaf != nil {
		fmt.Fprintf(w, "Leaf     %s\n", *r.Leaf)
	} else {
		fmt.Fprintf(w, "Leaf     none\n")
	}
	fmt.Fprintln(w)
	writeScopeTable(w, []string{"FILE", "BRANCH"}, []*stats.Scope{r.All, r.Branch})
	writeModelTable(w, "Per model, whole file", r.All)
	writeModelTable(w, "Per model, active branch", r.Branch)
}

// writeScopeTable prints the counts of one or more scopes side by side.
func writeScopeTable(w io.Writer, heads []string, scopes []*stats.Scope) {
	row := func(label string, val func(*stats.Scope) string) {
		line := fmt.Sprintf("%-24s", label)
		for _, s := range scopes {
			line += fmt.Sprintf("  %12s", val(s))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	row("", func(s *stats.Scope) string {
		for i, x := range scopes {
			if x == s {
				return heads[i]
			}
		}
		return ""
	})
	num := func(f func(*stats.Scope) int64) func(*stats.Scope) string {
		return func(s *stats.Scope) string { return strconv.FormatInt(f(s), 10) }
	}
	row("entries", num(func(s *stats.Scope) int64 { return int64(s.Entries) }))
	for _, t := range unionKeys(scopes, func(s *stats.Scope) map[string]int { return s.Types }) {
		row("  "+t, num(func(s *stats.Scope) int64 { return int64(s.Types[t]) }))
	}
	row("messages", num(func(s *stats.Scope) int64 { return int64(s.Messages) }))
	for _, r := range unionKeys(scopes, func(s *stats.Scope) map[string]int { return s.Roles }) {
		row("  "+r, num(func(s *stats.Scope) int64 { return int64(s.Roles[r]) }))
	}
	row("tokens", func(*stats.Scope) string { return "" })
	row("  input", num(func(s *stats.Scope) int64 { return s.Usage.Input }))
	row("  output", num(func(s *stats.Scope) int64 { return s.Usage.Output }))
	row("  cache read", num(func(s *stats.Scope) int64 { return s.Usage.CacheRead }))
	row("  cache write", num(func(s *stats.Scope) int64 { return s.Usage.CacheWrite }))
	row("  total", num(func(s *stats.Scope) int64 { return s.Usage.TotalTokens }))
	row("cost", func(s *stats.Scope) string { return human.Cost(s.Usage.Cost.Total) })
}

// unionKeys returns the sorted keys of a map over every scope.
func unionKeys(scopes []*stats.Scope, m func(*stats.Scope) map[string]int) []string {
	seen := map[string]bool{}
	var keys []string
	for _, s := range scopes {
		for k := range m(s) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func writeModelTable(w io.Writer, title string, s *stats.Scope) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(s.Models) == 0 {
		fmt.Fprintln(w, "  no assistant messages")
		return
	}
	fmt.Fprintf(w, "  %-36s %5s %10s %9s %10s %10s %10s %12s\n", "MODEL", "MSGS", "INPUT", "OUTPUT", "CACHE R", "CACHE W", "TOTAL", "COST")
	for _, m := range s.Models {
		fmt.Fprintf(w, "  %-36s %5d %10d %9d %10d %10d %10d %12s\n", human.CutRunes(m.Model, 36), m.Messages,
			m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheWrite, m.Usage.TotalTokens, human.Cost(m.Usage.Cost.Total))
	}
}
