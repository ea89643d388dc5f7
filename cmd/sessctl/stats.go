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
	"github.com/sessctl/sessctl/layout"
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
	noIndex := fs.Bool("no-index", false, "with --all, read every session file instead of using the stats index")
	if code := e.parse(statsCommand, fs, args); code >= 0 {
		return code
	}
	if *all {
		if fs.NArg() != 0 {
			return e.usageError("--all takes no SESSION")
		}
		return statsAll(e, *store, *asJSON, *noIndex)
	}
	if *noIndex {
		return e.usageError("--no-index goes with --all")
	}
	if code := e.oneSession(fs.Args()); code >= 0 {
		return code
	}
	sv, err := openSession(e, *store, fs.Arg(0), false)
	if err != nil {
		return e.fail(err)
	}
	defer sv.Close()
	var branch []*jsonl.Entry
	if sv.Leaf != "" {
		branch = sv.View().BranchPath("")
	}
	allScope, onBranch, err := stats.CountView(sv.View(), sv.Entries, branch)
	if err != nil {
		return e.fail(err)
	}
	rep := render.NewSessionStats(sv, allScope, onBranch)
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

// statsAll adds up every session file of a store. A directory's AgentUse
// sessions are counted beside them (their usage is not added up).
func statsAll(e *env, store string, asJSON, noIndex bool) int {
	places, err := storePlaces(store)
	if err != nil {
		return e.fail(err)
	}
	js := layout.Places(places, layout.FormatJSONL)
	if len(js) == 0 {
		return e.fail(fmt.Errorf("--store %s holds AgentUse sessions, not JSONL session files", store))
	}
	if len(js) > 1 {
		return e.usageError("stats --all adds up one store of session files: --store pi, indusagi or a directory, not %s", human.Quote(store))
	}
	rep, total, err := render.PlaceStats(e.ctx, places, stats.DirOptions{
		Skip: func(p string, err error) {
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: %v\n", human.QuotePath(p), err)
		},
		Header:  e.warnVersion,
		NoIndex: noIndex,
	}, func(err error) { fmt.Fprintf(e.stderr, "sessctl: stats: skipping %v\n", err) })
	if err != nil {
		return e.fail(err)
	}
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
