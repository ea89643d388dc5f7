package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine/render"
)

var showCommand = newCommand("show", "print the active branch of a session as a readable transcript")

func init() { showCommand.run = runShow }

func runShow(e *env, args []string) int {
	fs := e.flags(showCommand)
	store := storeFlag(fs)
	leaf := fs.String("leaf", "", "show the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	full := fs.Bool("full", false, "print thinking, tool arguments and tool results in full")
	asJSON := fs.Bool("json", false, "print the header and the branch's stored lines as JSONL")
	au := addAgentUseFlags(fs, false)
	rf := addRemoteFlags(fs)
	if code := e.parse(showCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if code := e.oneSession(pos); code >= 0 {
		return code
	}
	var sv *render.Session
	var done func()
	var err error
	switch {
	case *rf.remote != "":
		if *store != "pi" || *au.project != "" {
			return e.usageError("--remote shows a pi session of the remote: it cannot be combined with --store or --project")
		}
		if sv, done, err = openRemoteView(e, rf, pos[0]); err != nil {
			return e.failRemote(err)
		}
	case *rf.identity != "":
		return e.usageError("--age-identity needs --remote")
	}
	if sv == nil && useAgentUse(*store, pos[0]) {
		if *leaf != "" {
			return e.usageError("--leaf does not apply to AgentUse sessions, which have no branches")
		}
		return runShowAgentUse(e, *au.project, pos[0], *full, *asJSON)
	}
	if sv == nil {
		if sv, err = openSession(e, *store, pos[0], false); err != nil {
			return e.fail(err)
		}
		done = func() { _ = sv.Close() }
	}
	defer done()
	path, err := sv.BranchTo(*leaf)
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	if *asJSON {
		err = render.StoredLines(w, sv.Header.Raw, sv.View().Lines(path))
	} else {
		// A write error stays in w too: Flush reports it.
		err = render.Transcript(w, sv, path, render.TranscriptOptions{Full: *full, CutNote: "--full shows all"})
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return e.fail(err)
	}
	return exitOK
}

// openSession resolves a SESSION argument in store and opens it
// read-only for the renderers (render.Open: whole, or as an engine.View
// for the commands that go through the entries in order), warning on
// stderr when the file is of a newer format version. The caller closes
// it.
func openSession(e *env, store, arg string, whole bool) (*render.Session, error) {
	path, err := resolveSession(store, arg)
	if err != nil {
		return nil, err
	}
	sv, err := render.Open(e.ctx, path, whole)
	if err != nil {
		return nil, err
	}
	e.warnVersion(sv.Path, sv.Header.Entry)
	return sv, nil
}
