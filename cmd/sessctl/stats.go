package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var statsCommand = &command{
	name:    "stats",
	summary: "count messages, tokens and cost of a session, per model",
	usage:   helpText("stats"),
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
	if code := e.oneSession(fs.Args()); code >= 0 {
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
		_ = render.SessionStatsText(w, &rep) // a write error stays in w: Flush reports it
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
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: %v\n", human.QuotePath(p), err)
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
		_ = render.StoreStatsText(w, rep) // a write error stays in w: Flush reports it
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if total.Unread > 0 {
		// The totals may miss what could not be read.
		fmt.Fprintf(e.stderr, "sessctl: stats: the totals leave out what could not be read (%s)\n", human.Plural(total.Unread, "directory or file", "directories or files"))
		return exitFailure
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
