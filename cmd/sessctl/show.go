package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
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
	var sv *sessionView
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
		if sv, err = openLean(e, *store, pos[0]); err != nil {
			return e.fail(err)
		}
		done = sv.close
	}
	defer done()
	path, err := sv.branch(*leaf)
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	if *asJSON {
		err = render.StoredLines(w, sv.Header.Raw, sv.v.Lines(path))
	} else {
		// A write error stays in w too: Flush reports it.
		err = render.Transcript(w, sv.Session, path, render.TranscriptOptions{Full: *full, CutNote: "--full shows all"})
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return e.fail(err)
	}
	return exitOK
}

// ---- the session as the read commands see it ----

// sessionView is a session opened read-only, with a snapshot of what the
// read commands print about it: a whole session (s) where the command
// needs every entry's bytes at once, or a View (v), whose messages are
// read back as they are printed, where it goes through them in order.
type sessionView struct {
	*render.Session
	s *engine.Session
	v *engine.View
}

// openView resolves and opens a session read-only and snapshots it,
// warning on stderr when the file is of a newer format version. The
// caller closes it.
func openView(e *env, store, arg string) (*sessionView, error) {
	path, err := resolveSession(store, arg)
	if err != nil {
		return nil, err
	}
	s, err := openReadOnly(e.ctx, path)
	if err != nil {
		return nil, err
	}
	sv := &sessionView{Session: render.Snapshot(s), s: s}
	e.warnVersion(sv.Path, sv.Header.Entry)
	return sv, nil
}

// openLean is openView for the commands that go through the entries in
// order (show, export, stats): the session is read as an engine.View,
// holding a small part of a large file at a time.
func openLean(e *env, store, arg string) (*sessionView, error) {
	path, err := resolveSession(store, arg)
	if err != nil {
		return nil, err
	}
	v, err := fileStore(path, engine.StoreOptions{}).View(e.ctx, path)
	if err != nil {
		return nil, err
	}
	sv := &sessionView{Session: render.SnapshotView(v), v: v}
	e.warnVersion(sv.Path, sv.Header.Entry)
	return sv, nil
}

func (sv *sessionView) close() {
	if sv.v != nil {
		_ = sv.v.Close()
		return
	}
	_ = sv.s.Close()
}

// branch returns the root-to-leaf path, or the path to the entry named by
// id (a full id or a unique prefix).
func (sv *sessionView) branch(id string) ([]*jsonl.Entry, error) {
	if sv.v != nil {
		return sv.v.BranchTo(id)
	}
	return sv.s.BranchTo(id)
}
