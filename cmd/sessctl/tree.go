package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
)

var treeCommand = &command{
	name:    "tree",
	summary: "print a session's entries as an ASCII tree",
	usage:   helpText("tree"),
}

func init() { register(treeCommand).run = runTree }

func runTree(e *env, args []string) int {
	fs := e.flags(treeCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print the tree as JSON")
	if code := e.parse(treeCommand, fs, args); code >= 0 {
		return code
	}
	if code := e.oneSession(fs.Args()); code >= 0 {
		return code
	}
	if dir := fs.Arg(0); isAgentUseDir(dir) || isDir(dir) {
		return treeAgentUse(e, dir, *asJSON)
	}
	sv, err := openSession(e, *store, fs.Arg(0), true)
	if err != nil {
		return e.fail(err)
	}
	defer sv.Close()
	roots := sv.Tree()
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	var missing int
	if *asJSON {
		missing, err = render.TreeJSON(w, sv, roots)
	} else {
		missing, err = render.Tree(w, sv, roots)
	}
	if err != nil {
		return e.fail(err)
	}
	if missing > 0 {
		what := human.Plural(missing, "entry is on a parent cycle", "entries are on parent cycles")
		fmt.Fprintf(e.stderr, "sessctl: tree: %s and not part of the tree\nhint: run 'sessctl verify %s'\n", what, human.ShellQuote(sv.Path))
	}
	return exitOK
}

// isDir reports whether path names a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// treeAgentUse is `sessctl tree DIR` for AgentUse: the sessions of the
// session directory DIR, or of every session below DIR, each with its
// subagent sessions below it. --json prints them as list --agentuse
// --json does, subagents included.
func treeAgentUse(e *env, dir string, asJSON bool) int {
	code := exitOK
	tops, err := agentuse.Trees(e.ctx, agentuse.StoreOptions{}, dir, func(err error) {
		fmt.Fprintf(e.stderr, "sessctl: tree: skipped %v\n", err)
		code = exitFailure
	})
	if err != nil {
		return e.fail(err)
	}
	if len(tops) == 0 {
		return e.fail(fmt.Errorf("%s: no sessions (neither a session file nor AgentUse sessions): %w", dir, engine.ErrNotFound))
	}
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		render.AgentUseTreeJSON(w, tops)
	} else {
		_ = render.AgentUseTree(w, tops) // a write error stays in w: Flush reports it
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return code
}
