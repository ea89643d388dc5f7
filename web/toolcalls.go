package web

import (
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// How a transcript shows the calls of pi's built-in tools (pi 1.6.0's
// names and argument names, dist/core/tools): a bash call as its
// command, a read as its path and line range, an edit as a diff of its
// replacements, a write as its path with the content folded. Other
// tools, and calls whose arguments are not what the tool takes, keep
// their JSON, folded. Every text is plain text the templates escape.

// diffLine is one line of an edit's diff: Class is del, add, ctx (a line
// both texts hold) or hunk (the head of one replacement of several);
// Text is the line as shown, with its -, + or space and its newline.
type diffLine struct {
	Class, Text string
}

// toolCallBlock shows a call of tool name with arguments args (JSON);
// ok is false when it is not one of the tools shown by their arguments.
func toolCallBlock(name string, args []byte) (block, bool) {
	if jsonl.KindOf(args) != jsonl.KindObject {
		return block{}, false
	}
	str := func(k string) (string, bool) {
		v, ok := jsonl.Lookup(args, k)
		if !ok {
			return "", false
		}
		return jsonl.String(v)
	}
	// pi's renderers take file_path where path is missing.
	path := func() (string, bool) {
		if p, ok := str("path"); ok {
			return p, true
		}
		return str("file_path")
	}
	switch name {
	case "bash":
		cmd, ok := str("command")
		if !ok {
			return block{}, false
		}
		b := block{Kind: "cmd", Tool: name}
		b.Text, b.Cut = cut(cmd)
		if v, ok := jsonl.Lookup(args, "timeout"); ok {
			if n, ok := lineNumber(v); ok {
				b.Summary = "timeout " + strconv.FormatFloat(n, 'f', -1, 64) + " s"
			}
		}
		return b, true
	case "read":
		p, ok := path()
		if !ok {
			return block{}, false
		}
		off, _ := jsonl.Lookup(args, "offset")
		lim, _ := jsonl.Lookup(args, "limit")
		return block{Kind: "read", Tool: name, Path: p, Summary: readRange(off, lim)}, true
	case "write":
		p, ok := path()
		content, ok2 := str("content")
		if !ok || !ok2 {
			return block{}, false
		}
		n := strings.Count(strings.TrimSuffix(content, "\n"), "\n") + 1
		if content == "" {
			n = 0
		}
		b := block{Kind: "call", Tool: name, Path: p,
			Summary: "→ write " + human.OneLine(p, 140) + " (" + human.Plural(n, "line", "lines") + ", " + human.Bytes(len(content)) + ")"}
		b.Text, b.Cut = cut(content)
		return b, true
	case "edit":
		p, ok := path()
		edits, ok2 := editsOf(args)
		if !ok || !ok2 {
			return block{}, false
		}
		return diffBlock(name, p, edits), true
	}
	return block{}, false
}

// lineNumber is pi's parseLineNumber: a finite number, or a string that
// is one.
func lineNumber(v []byte) (float64, bool) {
	if s, ok := jsonl.String(v); ok {
		s = strings.TrimSpace(s)
		if s == "" {
			return 0, false
		}
		n, err := strconv.ParseFloat(s, 64)
		return n, err == nil
	}
	return jsonl.Number(v)
}

// readRange says which lines a read asks for, as pi's
// formatReadLineRange does ("" for the file from its start, or a
// malformed range).
func readRange(offset, limit []byte) string {
	absent := func(v []byte) bool { return v == nil || jsonl.KindOf(v) == jsonl.KindNull }
	if absent(offset) && absent(limit) {
		return ""
	}
	start := 1.0
	if !absent(offset) {
		n, ok := lineNumber(offset)
		if !ok {
			return ""
		}
		start = n
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	if absent(limit) {
		return "from line " + num(start)
	}
	count, ok := lineNumber(limit)
	if !ok {
		return ""
	}
	if end := start + count - 1; end != 0 {
		return "lines " + num(start) + "–" + num(end)
	}
	return "from line " + num(start)
}

// edit is one replacement of an edit call.
type edit struct{ old, new string }

// editsOf reads an edit call's replacements as pi 1.6.0's
// prepareArguments does: edits as an array, a JSON string of one, or a
// single object, and a legacy top-level oldText/newText pair after them.
func editsOf(args []byte) ([]edit, bool) {
	one := func(v []byte) (edit, bool) {
		o, ok1 := jsonl.Lookup(v, "oldText")
		n, ok2 := jsonl.Lookup(v, "newText")
		if !ok1 || !ok2 {
			return edit{}, false
		}
		ov, ok1 := jsonl.String(o)
		nv, ok2 := jsonl.String(n)
		return edit{ov, nv}, ok1 && ok2
	}
	var out []edit
	v, has := jsonl.Lookup(args, "edits")
	if s, ok := jsonl.String(v); has && ok {
		v = []byte(s) // some models send the array as a JSON string
	}
	switch jsonl.KindOf(v) {
	case jsonl.KindArray:
		bad := false
		_ = jsonl.Elements(v, func(el []byte) bool {
			e, ok := one(el)
			bad = bad || !ok
			out = append(out, e)
			return !bad
		})
		if bad {
			return nil, false
		}
	case jsonl.KindObject:
		e, ok := one(v)
		if !ok {
			return nil, false
		}
		out = append(out, e)
	}
	if e, ok := one(args); ok {
		out = append(out, e)
	}
	return out, len(out) > 0
}

// maxDiffCells bounds the work of diffing one replacement's middle
// lines (lines of the old text times lines of the new); beyond it the
// middle shows as all its old lines, then all its new ones.
const maxDiffCells = 1 << 20

// diffBlock shows an edit of path as a diff: each replacement's old and
// new texts, line by line, with the lines both hold as context. It is
// open unless it is long.
func diffBlock(tool, path string, edits []edit) block {
	b := block{Kind: "diff", Tool: tool, Path: path}
	adds, dels, size, left := 0, 0, 0, 0
	for i, e := range edits {
		if len(edits) > 1 {
			b.Lines = append(b.Lines, diffLine{"hunk", "@@ replacement " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(edits)) + " @@\n"})
		}
		for _, l := range diffLines(e.old, e.new) {
			switch l.Class {
			case "add":
				adds++
			case "del":
				dels++
			}
			if left > 0 || size+len(l.Text) > maxBlock {
				left++
				continue
			}
			size += len(l.Text)
			b.Lines = append(b.Lines, l)
		}
	}
	if left > 0 {
		b.Cut = human.Plural(left, "more line", "more lines") + " of the diff"
	}
	b.Summary = "→ edit " + human.OneLine(path, 140) + " (+" + strconv.Itoa(adds) + " −" + strconv.Itoa(dels) + ")"
	b.Open = len(b.Lines) <= 40
	return b
}

// diffLines is the line diff of a replacement.
func diffLines(old, new string) []diffLine {
	a, bl := splitLines(old), splitLines(new)
	var out []diffLine
	line := func(class, mark, s string) { out = append(out, diffLine{class, mark + s + "\n"}) }
	pre := 0
	for pre < len(a) && pre < len(bl) && a[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(bl)-pre && a[len(a)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	for _, s := range a[:pre] {
		line("ctx", " ", s)
	}
	ma, mb := a[pre:len(a)-suf], bl[pre:len(bl)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		for _, s := range ma {
			line("del", "-", s)
		}
		for _, s := range mb {
			line("add", "+", s)
		}
	} else {
		// The longest common subsequence of the middle lines, from
		// the end: l[i][j] is its length for ma[i:] and mb[j:].
		w := len(mb) + 1
		l := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					l[i*w+j] = l[(i+1)*w+j+1] + 1
				} else {
					l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				line("ctx", " ", ma[i])
				i, j = i+1, j+1
			case j == len(mb) || i < len(ma) && l[(i+1)*w+j] >= l[i*w+j+1]:
				line("del", "-", ma[i])
				i++
			default:
				line("add", "+", mb[j])
				j++
			}
		}
	}
	for _, s := range a[len(a)-suf:] {
		line("ctx", " ", s)
	}
	return out
}

// splitLines splits s into lines without their newlines; "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
