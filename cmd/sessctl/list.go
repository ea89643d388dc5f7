package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
)

var listCommand = &command{
	name:    "list",
	summary: "list sessions, newest first",
	usage:   helpText("list"),
}

func init() { register(listCommand).run = runList }

func runList(e *env, args []string) int {
	fs := e.flags(listCommand)
	dir := fs.String("dir", "", "list the session directory `DIR`")
	cwd := fs.String("cwd", "", "list the sessions of working directory `DIR`")
	all := fs.Bool("all", false, "list the sessions of every working directory")
	store := fs.String("store", "pi", "the store to list: `pi`, indusagi, agentuse or a directory (listed recursively)")
	indusagi := fs.Bool("indusagi", false, "use indusagi's store instead of pi's (--store indusagi)")
	asJSON := fs.Bool("json", false, "print JSON")
	noIndex := fs.Bool("no-index", false, "read every session file instead of using the list index")
	au := addAgentUseFlags(fs, true)
	rf := addRemoteFlags(fs)
	if code := e.parse(listCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		return e.usageError("unexpected argument %s", human.Quote(fs.Arg(0)))
	}
	if *rf.remote != "" {
		if *dir != "" || *cwd != "" || *all || *indusagi || *noIndex || *au.on || *store != "pi" {
			return e.usageError("--remote lists the remote's sessions: it cannot be combined with --dir, --cwd, --all, --store, --indusagi, --agentuse or --no-index")
		}
		return runListRemote(e, rf, *asJSON)
	}
	if *rf.identity != "" {
		return e.usageError("--age-identity needs --remote")
	}
	// --store names places (layout.ResolvePlaces): pi's or indusagi's
	// store lists a cwd's sessions, as before; agentuse a project's; a
	// directory, or all, every session of both formats below it.
	places, err := storePlaces(*store)
	if err != nil {
		return e.fail(err)
	}
	many := false
	switch {
	case len(places) == 1 && places[0].Name == layout.PlaceIndusagi:
		*indusagi = true
	case len(places) == 1 && places[0].Format == layout.FormatAgentUse:
		*au.on = true
	case len(places) == 1 && places[0].Name == layout.PlacePi:
	default:
		if *indusagi {
			return e.usageError("--indusagi cannot be combined with --store %s", *store)
		}
		many = true
	}
	if *au.on {
		if *dir != "" || *cwd != "" || *all || *indusagi || *noIndex || many {
			return e.usageError("--agentuse cannot be combined with --dir, --cwd, --all, --indusagi, --no-index or --store other than agentuse")
		}
		return runListAgentUse(e, au, *asJSON)
	}
	if *au.project != "" || *au.subagents {
		return e.usageError("--project and --subagents need --agentuse")
	}
	n := 0
	for _, set := range []bool{*dir != "", *cwd != "", *all, many} {
		if set {
			n++
		}
	}
	if n > 1 {
		return e.usageError("--dir, --cwd, --all and --store DIR cannot be combined")
	}
	skipped := 0
	warn := func(err error) {
		skipped++
		fmt.Fprintf(e.stderr, "sessctl: list: skipped %v\n", err)
	}
	// The listing holds no texts: the table shows none, and --json takes
	// them one at a time once the listing is sorted (ListTexts), so that
	// a store's texts, most of its bytes, are never all in memory.
	o := engine.ListOptions{NoIndex: *noIndex, NoText: true, Warn: warn}
	if many {
		if *store == layout.PlaceAll {
			places = existingPlaces(places)
		}
		l, err := render.ListPlaces(e.ctx, places, o)
		if err != nil {
			return e.fail(err)
		}
		return writeList(e, l, o, *asJSON, &skipped)
	}
	so := engine.StoreOptions{}
	if *indusagi {
		so.Agent = layout.AgentIndusagi
	}
	// A directory store lists its tree (cwd ""); --dir one directory.
	listCwd := ""
	switch {
	case *all:
	default:
		if *dir != "" {
			if err := mustBeDir("session directory", *dir); err != nil {
				return e.fail(err)
			}
			so.Dir = *dir
			// --dir alone lists the whole directory; with --cwd only
			// that cwd's sessions, as pi 1.x lists a directory.
			o.EveryCwd = *cwd == ""
		}
		listCwd = *cwd
		if listCwd == "" {
			if listCwd, _ = os.Getwd(); listCwd == "" {
				listCwd = "." // not "": that would list every cwd
			}
		} else if abs, aerr := cwdArg(listCwd); aerr == nil {
			listCwd = abs
		}
	}
	st, err := engine.OpenStore(e.ctx, so)
	if err != nil {
		return e.fail(err)
	}
	l, err := render.ListStore(e.ctx, st, listCwd, o, *all)
	if err != nil {
		return e.fail(err)
	}
	return writeList(e, l, o, *asJSON, &skipped)
}

// writeList prints a listing (render.PlaceListing): as a table, or with
// asJSON as one JSON array with each session's texts (read one at a
// time). It returns the exit code: a failure when a file was skipped
// (counted in *skipped by o.Warn).
func writeList(e *env, l *render.PlaceListing, o engine.ListOptions, asJSON bool, skipped *int) int {
	if asJSON {
		if err := l.WriteJSON(e.ctx, o, func(b [][]byte) error { return writeBuffers(e.stdout, b) }); err != nil {
			return e.fail(err)
		}
	} else {
		if l.Empty() {
			fmt.Fprintln(e.stderr, "no sessions")
		}
		w := bufio.NewWriter(e.stdout)
		_ = l.WriteText(e.ctx, w) // a write error stays in w: Flush reports it
		if err := w.Flush(); err != nil {
			return e.fail(err)
		}
	}
	if *skipped > 0 {
		return exitFailure
	}
	return exitOK
}

// mustBeDir checks that a directory named on the command line exists (a
// missing one is not found, exit 5) and is a directory.
func mustBeDir(what, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %w", what, dir, engine.ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %w", what, dir, syscall.ENOTDIR)
	}
	return nil
}
