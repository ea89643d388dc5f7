package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
)

var forkCommand = &command{
	name:    "fork",
	summary: "copy one branch of a session into a new session",
	usage:   helpText("fork"),
}

func init() { register(forkCommand).run = runFork }

func runFork(e *env, args []string) int {
	fs := e.flags(forkCommand)
	store := storeFlag(fs)
	at := fs.String("at", "", "copy the path up to entry `ENTRY` instead of the active leaf")
	cwd := fs.String("cwd", "", "working directory `DIR` of the new session (its file goes in DIR's session folder)")
	all := fs.Bool("all", false, "copy every branch (pi's forkFrom), not one path")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(forkCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if code := e.oneSession(pos); code >= 0 {
		return code
	}
	if *all && *at != "" {
		return e.usageError("--all and --at cannot be combined")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return e.fail(err)
	}
	newCwd := ""
	if *cwd != "" {
		if newCwd, err = cwdArg(*cwd); err != nil {
			return e.fail(err)
		}
	}
	// The new file goes into the store --store names (pi's by default):
	// beside the source when the source is in it, else into its folder
	// for the cwd (--cwd's, or the source's).
	so := engine.StoreOptions{Command: "sessctl fork"}
	st, err := jsonlStore(*store, so)
	if err != nil {
		if layout.IsPlaceName(*store) && *store != layout.PlacePi && *store != "" {
			return e.fail(err) // agentuse, all: no store of session files to fork into
		}
		if newCwd != "" {
			return e.fail(err)
		}
		st = fileStore(path, so)
	}
	// The copy streams: a large session is never held whole.
	ff, err := st.ForkFile(e.ctx, path, engine.ForkOptions{Branch: !*all, At: *at, Cwd: newCwd})
	var ee *engine.EntryError
	switch {
	case errors.As(err, &ee):
		return e.failEntry(err, pos[0])
	case err != nil:
		return e.fail(err)
	}
	id, file, h := ff.Header.ID, ff.Path, ff.Header
	leaf, hasLeaf, n := ff.Leaf, ff.HasLeaf, ff.Entries
	if *asJSON {
		b := jsonl.NewObject(256).String("id", id).String("path", file).
			String("parentSession", h.ParentSession).String("cwd", h.Cwd)
		if hasLeaf {
			b.String("leafId", leaf)
		} else {
			b.Null("leafId")
		}
		jsonOut(e.stdout, b.Number("entries", float64(n)).Bytes())
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s  %s\n", human.QuotePath(id), human.QuotePath(file))
	return exitOK
}
