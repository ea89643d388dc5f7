package main

import (
	"bufio"
	"fmt"

	"github.com/sessctl/sessctl/engine/render"
)

var treeCommand = &command{
	name:    "tree",
	summary: "print a session's entries as an ASCII tree",
	usage: `
Usage: sessctl tree [--json] SESSION

Prints every entry of a session, on every branch, as a tree in pi's
getTree order: roots in file order, children sorted by timestamp. Each
line shows the entry id, a one-line preview (user and assistant text,
tool names, summaries, names, model changes) and the entry's label; the
active leaf (the entry pi continues from) is marked with '*' in the
first column.

Linear runs are not indented: a node with one child is followed by that
child at the same indentation, so a long conversation stays at the left
margin. Indentation grows only where the conversation branches: each
child of a branch point starts with '├─ ' (or '└─ ' for the last one)
and its whole run continues under a '│  ' rail, like pi's /tree:

    a1b2c3d4  user: Why does the build fail?
    b2c3d4e5  assistant: Let me look at the log. -> bash
    ├─ c3d4e5f6  tool bash: layout/codec.go:12: undefined: utf16
    │  d4e5f6a7  assistant: codec.go uses utf16 without importing it.  (label: cause)
    └─ e5f6a7b8  branch summary: Found a missing import.
  *    f6a7b8c9  user: Fix it and add a test.

An id repeated in the file (which pi indexes once) is printed once; its
other places say "repeated id". Entries on a parent cycle are not part of
pi's tree; their number is reported on stderr.

--json prints the tree as a JSON array of root nodes, each
{"id": ID, "type": TYPE, "label": LABEL, "leaf": true, "children": [...]},
where "label" is present only for labelled entries and "leaf" only on the
active leaf. This is the "tree" of 'sessctl dump' plus the leaf marker.
It nests as deep as the longest chain: a conversation of more than
10000 entries is deeper than jq and Go's encoding/json will parse.

The file is opened read-only. SESSION is a file path, a session id or a
unique id prefix (see --store).

Examples:
  sessctl tree 390d8e15
  sessctl tree --json session.jsonl | jq '.[0].children | length'
`,
}

func init() { register(treeCommand).run = runTree }

func runTree(e *env, args []string) int {
	fs := e.flags(treeCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print the tree as JSON")
	if code := e.parse(treeCommand, fs, args); code >= 0 {
		return code
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
		fmt.Fprintf(e.stderr, "sessctl: tree: %d entries are on parent cycles and not part of the tree\nhint: run 'sessctl verify %s'\n", missing, sv.Path)
	}
	return exitOK
}
