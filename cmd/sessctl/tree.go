package main

import (
	"bufio"
	"fmt"

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
	sv, err := openView(e, *store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	roots := sv.s.Tree()
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	var missing int
	if *asJSON {
		missing, err = render.TreeJSON(w, sv.Session, roots)
	} else {
		missing, err = render.Tree(w, sv.Session, roots)
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
