package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
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
	opts := engine.Options{Command: "sessctl fork", Agent: storeAgent(*store)}

	var ns *engine.Session
	if *all {
		// ForkFrom reads the source itself: opening it here too would
		// hold a large session twice.
		c, dir := newCwd, ""
		if c == "" {
			c, dir = headerCwd(path), filepath.Dir(path)
		}
		o := opts
		o.Dir = dir
		ns, err = engine.ForkFrom(e.ctx, path, c, o)
	} else {
		var src *engine.Session
		if src, err = engine.Open(e.ctx, path, engine.Options{ReadOnly: true}); err != nil {
			return e.fail(err)
		}
		defer src.Close()
		leaf := ""
		if *at != "" {
			if leaf, err = src.ResolveEntry(*at); err != nil {
				return e.failEntry(err, pos[0])
			}
		} else {
			id, kind := src.LeafIDKind()
			if kind != jsonl.KindString {
				return e.fail(errors.New("the session has no entries to fork"))
			}
			leaf = id
		}
		ns, err = src.ForkBranch(e.ctx, leaf, engine.ForkBranchOptions{Cwd: newCwd, Options: opts})
	}
	if err != nil {
		return e.fail(err)
	}
	id, file, h := ns.SessionID(), ns.SessionFile(), ns.Header()
	leaf, leafKind := ns.LeafIDKind()
	n := len(ns.Entries())
	if err := ns.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		b := jsonl.NewObject(256).String("id", id).String("path", file).
			String("parentSession", h.ParentSession).String("cwd", h.Cwd)
		if leafKind == jsonl.KindString {
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

// headerCwd returns the working directory in the header of the session
// file at path, read from its first lines only; "" when there is none
// (the fork then fails on the header, or uses sessctl's own directory).
func headerCwd(path string) string {
	en, ok := render.ReadHeaderLine(path)
	if !ok {
		return ""
	}
	h := jsonl.ParseHeader(en)
	if !h.HasCwd {
		cwd, _ := os.Getwd()
		return cwd
	}
	return h.Cwd
}

// storeAgent is the agent whose directory holds new sessions for --store.
func storeAgent(store string) layout.Agent {
	if store == "indusagi" {
		return layout.AgentIndusagi
	}
	return layout.AgentPi
}
