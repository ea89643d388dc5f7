package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
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
	var shown int
	if *asJSON {
		shown = writeTreeJSON(w, roots, sv.leaf)
	} else {
		shown = writeTreeText(w, sv, roots)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if missing := distinctIDs(sv.entries) - shown; missing > 0 {
		fmt.Fprintf(e.stderr, "sessctl: tree: %d entries are on parent cycles and not part of the tree\nhint: run 'sessctl verify %s'\n", missing, sv.path)
	}
	return exitOK
}

// distinctIDs counts the distinct index keys of entries.
func distinctIDs(entries []*jsonl.Entry) int {
	seen := make(map[string]struct{}, len(entries))
	for _, en := range entries {
		seen[tree.Key(en)] = struct{}{}
	}
	return len(seen)
}

// Box-drawing connectors of the human tree.
const (
	connMid  = "├─ "
	connLast = "└─ "
	railMid  = "│  "
	railLast = "   "
)

// writeTreeText prints the tree and returns how many distinct nodes it
// printed. It walks with an explicit stack: depth is unbounded.
func writeTreeText(w io.Writer, sv *sessionView, roots []*tree.Node) int {
	type frame struct {
		n      *tree.Node
		prefix string // printed before this node
		rail   string // prefix of the node's children
	}
	fmt.Fprintf(w, "session %s", sv.id)
	if sv.hasName {
		fmt.Fprintf(w, " %q", oneLine(sv.name, 80))
	}
	fmt.Fprintf(w, " (%d entries)\n", len(sv.entries))
	var stack []frame
	push := func(children []*tree.Node, rail string) {
		if len(children) == 1 {
			stack = append(stack, frame{children[0], rail, rail})
			return
		}
		for i := len(children) - 1; i >= 0; i-- {
			if i == len(children)-1 {
				stack = append(stack, frame{children[i], rail + connLast, rail + railLast})
			} else {
				stack = append(stack, frame{children[i], rail + connMid, rail + railMid})
			}
		}
	}
	push(roots, "")
	printed := map[*tree.Node]bool{}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		gutter := "  "
		if sv.leaf != "" && f.n.Entry.IDKind == jsonl.KindString && f.n.Key == sv.leaf {
			gutter = "* "
		}
		id := jsonl.KeyString(f.n.Key)
		if f.n.Entry.IDKind == jsonl.KindAbsent {
			id = "(no id)"
		}
		if printed[f.n] {
			fmt.Fprintf(w, "%s%s%s  (repeated id, shown above)\n", gutter, f.prefix, id)
			continue
		}
		printed[f.n] = true
		line := id + "  " + entryPreview(f.n.Entry)
		if f.n.HasLabel {
			line += "  (label: " + oneLine(f.n.Label, 40) + ")"
		}
		fmt.Fprintf(w, "%s%s%s\n", gutter, f.prefix, line)
		push(f.n.Children, f.rail)
	}
	return len(printed)
}

// writeTreeJSON prints the tree as JSON and returns the number of distinct
// nodes.
func writeTreeJSON(w *bufio.Writer, roots []*tree.Node, leaf string) int {
	seen := map[*tree.Node]bool{}
	first := true
	sep := func() {
		if !first {
			w.WriteByte(',')
		}
		first = false
	}
	w.WriteByte('[')
	tree.Walk(roots, func(n *tree.Node, _ int) bool {
		seen[n] = true
		sep()
		w.WriteString(`{"id":`)
		switch n.Entry.IDKind {
		case jsonl.KindAbsent:
			w.WriteString("null")
		case jsonl.KindString:
			w.Write(jsonl.AppendString(nil, n.Key))
		default:
			w.WriteString(jsonl.KeyString(n.Key))
		}
		if t, ok := n.Entry.Field("type"); ok {
			w.WriteString(`,"type":`)
			w.Write(t)
		}
		if n.HasLabel {
			w.WriteString(`,"label":`)
			w.Write(jsonl.AppendString(nil, n.Label))
		}
		if leaf != "" && n.Entry.IDKind == jsonl.KindString && n.Key == leaf {
			w.WriteString(`,"leaf":true`)
		}
		w.WriteString(`,"children":[`)
		first = true
		return true
	}, func(*tree.Node, int) {
		w.WriteString("]}")
		first = false
	})
	w.WriteString("]\n")
	return len(seen)
}

// preview is the one-line description of an entry in the tree.
func entryPreview(en *jsonl.Entry) string {
	const width = 72
	switch en.Type {
	case jsonl.TypeMessage:
		m := msgOf(en)
		switch role := m.s("role"); role {
		case "user":
			return "user: " + shortLine(contentText(m.get("content")), width)
		case "assistant":
			var tools []string
			for _, b := range contentBlocks(m.get("content")) {
				if b.typ == "toolCall" {
					tools = append(tools, b.name)
				}
			}
			s := "assistant: " + shortLine(contentText(m.get("content")), width)
			if len(tools) > 0 {
				s = strings.TrimRight(s, " ") + " -> " + strings.Join(tools, ", ")
			}
			return s
		case "toolResult":
			s := "tool " + m.s("toolName") + ": " + shortLine(firstLineOf(strings.TrimSpace(contentText(m.get("content")))), width)
			if m.get("isError").isTrue() {
				s += " (error)"
			}
			return s
		case "bashExecution":
			return "bash: $ " + shortLine(m.s("command"), width)
		case "custom":
			return "custom " + m.s("customType") + ": " + shortLine(contentText(m.get("content")), width)
		case "":
			return "message"
		default:
			return role
		}
	case jsonl.TypeCompaction:
		n, _ := entryField(en, "tokensBefore").num()
		return "compaction (" + strconv.FormatFloat(n, 'f', -1, 64) + " tokens): " + shortLine(entryField(en, "summary").str(), width)
	case jsonl.TypeBranchSummary:
		return "branch summary: " + shortLine(entryField(en, "summary").str(), width)
	case jsonl.TypeCustomMessage:
		return "custom message " + entryField(en, "customType").str() + ": " + shortLine(contentText(entryField(en, "content")), width)
	case jsonl.TypeCustom:
		return "custom " + entryField(en, "customType").str()
	case jsonl.TypeModelChange:
		return "model " + modelLabel(entryField(en, "provider").str(), entryField(en, "modelId").str())
	case jsonl.TypeThinkingLevelChange:
		return "thinking " + entryField(en, "thinkingLevel").str()
	case jsonl.TypeLabel:
		target := entryField(en, "targetId").str()
		if l := entryField(en, "label").str(); l != "" {
			return "label " + target + ": " + strconv.Quote(oneLine(l, 40))
		}
		return "label " + target + " cleared"
	case jsonl.TypeSessionInfo:
		return "name: " + strconv.Quote(oneLine(entryField(en, "name").str(), 60))
	case "":
		return "(no type)"
	}
	return en.Type
}
