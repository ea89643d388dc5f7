package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

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

// Tree writes the tree of s, whose roots are roots (s's entries indexed
// by package tree), as 'sessctl tree' prints it: one line per entry with
// its id and a preview (see Preview), box-drawing connectors where a node
// has several children, "* " before the leaf, a label after its entry. A
// chain of single children is printed without indenting. It returns the
// number of entries that are not in the tree (those on parent cycles).
func Tree(w io.Writer, s *Session, roots []*tree.Node) (missing int, err error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	shown := writeTreeText(bw, s, roots)
	return distinctIDs(s.Entries) - shown, bw.Flush()
}

// TreeJSON writes the tree of s as JSON, on one line: an array of nodes
// {"id": ID, "type": TYPE, "label": LABEL, "labelTimestamp": TIME,
// "leaf": true, "children": [NODE...]}, with "label" and "leaf" only
// where they apply, "labelTimestamp" (the timestamp of the label entry
// that set the label, as written) only beside a label that has one, and
// "id" null for an entry without one. It returns the number of entries that are not
// in the tree (those on parent cycles).
func TreeJSON(w io.Writer, s *Session, roots []*tree.Node) (missing int, err error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	shown := writeTreeJSON(bw, roots, s.Leaf)
	return distinctIDs(s.Entries) - shown, bw.Flush()
}

// writeTreeText prints the tree and returns how many distinct nodes it
// printed. It walks with an explicit stack: depth is unbounded.
func writeTreeText(w io.Writer, sv *Session, roots []*tree.Node) int {
	type frame struct {
		n      *tree.Node
		prefix string // printed before this node
		rail   string // prefix of the node's children
	}
	fmt.Fprintf(w, "session %s", sv.Header.ID)
	if sv.HasName {
		fmt.Fprintf(w, " %s", human.Quote(human.OneLine(sv.Name, 80)))
	}
	fmt.Fprintf(w, " (%s)\n", human.Plural(len(sv.Entries), "entry", "entries"))
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
		if sv.Leaf != "" && f.n.Entry.IDKind == jsonl.KindString && f.n.Key == sv.Leaf {
			gutter = "* "
		}
		id := human.QuotePath(jsonl.KeyString(f.n.Key))
		if f.n.Entry.IDKind == jsonl.KindAbsent {
			id = "(no id)"
		}
		if printed[f.n] {
			fmt.Fprintf(w, "%s%s%s  (repeated id, shown above)\n", gutter, f.prefix, id)
			continue
		}
		printed[f.n] = true
		line := id + "  " + Preview(f.n.Entry)
		if f.n.HasLabel {
			line += "  (label: " + human.OneLineName(f.n.Label, 40) + ")"
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
			if n.LabelTimestamp != nil {
				w.WriteString(`,"labelTimestamp":`)
				w.Write(n.LabelTimestamp)
			}
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

// Preview is the one-line description of an entry in a tree: its role or
// type and the beginning of its text.
func Preview(en *engine.Entry) string {
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
		return "model " + stats.ModelName(entryField(en, "provider").str(), entryField(en, "modelId").str())
	case jsonl.TypeThinkingLevelChange:
		return "thinking " + entryField(en, "thinkingLevel").str()
	case jsonl.TypeLabel:
		target := entryField(en, "targetId").str()
		if l := entryField(en, "label").str(); l != "" {
			return "label " + target + ": " + human.Quote(human.OneLine(l, 40))
		}
		return "label " + target + " cleared"
	case jsonl.TypeSessionInfo:
		return "name: " + human.Quote(human.OneLine(entryField(en, "name").str(), 60))
	case "":
		return "(no type)"
	}
	return en.Type
}
