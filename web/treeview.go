package web

import (
	"bytes"
	"cmp"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// The tree beside a transcript. A session's tree is shown as its
// segments: a segment is a run of entries each with one child, which
// ends at an entry with no child (a leaf) or several (a branch point,
// whose children start segments one level deeper). A long segment shows
// its first and last entries and, between them, only those worth finding
// (labelled entries, compactions, branch summaries, names), so that the
// tree of a session of a million entries is as long as its branches,
// not its entries. Every entry shown links to the branch that ends there.

// treeModel is the segments of a session's tree, depth first.
type treeModel struct {
	segs    []*segment
	entries int
	forks   map[string]int // the children of each branch point, by id

	previews map[*jsonl.Entry]string  // the previews of the entries shown, once read
	html     map[string]template.HTML // the tree rendered for a branch's last entry
}

// segment is one run of single-child entries.
type segment struct {
	Depth int
	items []segItem
	last  string // the id of the segment's last entry
	n     int    // its entries
}

// segItem is an entry shown in a segment, or a gap of entries left out.
type segItem struct {
	e   *jsonl.Entry // nil for a gap
	gap int
}

// segmentShown is how many entries a segment shows in full; longer ones
// show segmentEnds at each end and the notable entries between. A large
// session (bigTree entries or more) shows fewer.
const (
	segmentShown    = 40
	segmentEnds     = 3
	bigTree         = 2000
	bigSegmentShown = 8
	bigSegmentEnds  = 2
)

// buildTree makes the tree model of a view's entries. pi's getTree
// (tree.Index.Tree) makes a node and a map entry for every entry; for a
// session of a million entries that is hundreds of megabytes, so the
// children are found here by position instead: each entry's parent is the
// last entry with its parent id (where tree.Index.BranchFrom steps), the
// children of an entry are in file order, stably sorted by timestamp as
// pi sorts them, and the roots are the entries without a parent among
// them (a null, missing or own id as parent, or an id no entry has).
// Entries on a parent cycle are reached from no root and, as in pi's
// tree, appear nowhere. (With a repeated id, pi shows the one node once
// per copy; here each copy is shown once, and the children of the id hang
// from its last copy.)
func buildTree(st *viewState) *treeModel {
	ix := st.ix
	var all []*jsonl.Entry
	for _, c := range st.chunks {
		for _, e := range c {
			if !e.IsHeader() {
				all = append(all, e)
			}
		}
	}
	n := len(all)
	parent := make([]int32, n)
	{
		last := make(map[string]int32, n)
		for i, e := range all {
			last[tree.Key(e)] = int32(i)
		}
		for i, e := range all {
			parent[i] = -1
			if pk, ok := tree.ParentKey(e); ok && pk != tree.Key(e) {
				if p, ok := last[pk]; ok {
					parent[i] = p
				}
			}
		}
	}
	start := make([]int32, n+1) // the children of i are kids[start[i]:start[i+1]]
	for _, p := range parent {
		if p >= 0 {
			start[p+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	kids := make([]int32, start[n])
	fill := slices.Clone(start[:n])
	var roots []int32
	for i, p := range parent {
		if p < 0 {
			roots = append(roots, int32(i))
			continue
		}
		kids[fill[p]] = int32(i)
		fill[p]++
	}
	for i := range n {
		if ks := kids[start[i]:start[i+1]]; len(ks) > 1 {
			slices.SortStableFunc(ks, func(a, b int32) int { return byTime(all[a], all[b]) })
		}
	}

	tm := &treeModel{entries: ix.Len(), forks: map[string]int{}}
	shown, ends := segmentShown, segmentEnds
	if n >= bigTree {
		shown, ends = bigSegmentShown, bigSegmentEnds
	}
	var cur *segment
	var run []*jsonl.Entry
	flush := func() {
		if cur == nil {
			return
		}
		cur.n = len(run)
		cur.last = run[len(run)-1].ID
		if len(run) <= shown {
			for _, e := range run {
				cur.items = append(cur.items, segItem{e: e})
			}
		} else {
			gap := 0
			for i, e := range run {
				if i < ends || i >= len(run)-ends || notable(ix, e) {
					if gap > 0 {
						cur.items = append(cur.items, segItem{gap: gap})
						gap = 0
					}
					cur.items = append(cur.items, segItem{e: e})
				} else {
					gap++
				}
			}
		}
		cur, run = nil, nil
	}
	// Depth first, with an explicit stack. A segment goes on while each
	// entry is the only child of the one before; it hangs one level below
	// the segment that ends at its first entry's parent (a branch point).
	level := map[int32]int{}
	stack := slices.Clone(roots)
	slices.Reverse(stack)
	prev := int32(-1)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur == nil || prev < 0 || parent[i] != prev || start[prev+1]-start[prev] != 1 {
			flush()
			cur = &segment{}
			if p := parent[i]; p >= 0 {
				cur.Depth = level[p] + 1
			}
			tm.segs = append(tm.segs, cur)
		}
		run = append(run, all[i])
		ks := kids[start[i]:start[i+1]]
		if len(ks) > 1 {
			level[i] = cur.Depth
			tm.forks[all[i].ID] = len(ks)
		}
		for j := len(ks) - 1; j >= 0; j-- {
			stack = append(stack, ks[j])
		}
		prev = i
	}
	flush()
	return tm
}

// byTime orders two entries by Date.parse of their timestamps, as pi
// sorts children; a time that does not parse compares equal to anything.
func byTime(a, b *jsonl.Entry) int {
	x, okx := jsonl.ParseDate(a.Timestamp)
	y, oky := jsonl.ParseDate(b.Timestamp)
	if !okx || !oky || math.IsNaN(x) || math.IsNaN(y) {
		return 0
	}
	return cmp.Compare(x, y)
}

// notable reports whether a long segment shows e: a labelled entry, a
// compaction, a branch summary, a name.
func notable(ix *tree.Index, e *jsonl.Entry) bool {
	switch e.Type {
	case jsonl.TypeCompaction, jsonl.TypeBranchSummary, jsonl.TypeSessionInfo:
		return true
	}
	_, ok := ix.Label(e.ID)
	return ok
}

// treeLine is one line of the tree as a page shows it.
type treeLine struct {
	Depth   int
	Seg     bool // the first line of a segment
	ID      string
	URL     string
	Preview string
	Kind    string
	Label   string
	Leaf    bool // the session's leaf
	On      bool // on the branch shown
	At      bool // the entry the branch shown ends at
	Gap     int
	Branch  int // children, at a branch point
}

// tree returns the tree model of the view's entries, built once per
// change of the file. The view's lock is held for reading.
func (st *viewState) tree() *treeModel {
	st.treeMu.Lock()
	defer st.treeMu.Unlock()
	return st.treeLocked()
}

func (st *viewState) treeLocked() *treeModel {
	if st.treeMemo == nil || st.treeGen != st.gen {
		st.treeMemo = buildTree(st)
		st.treeGen = st.gen
	}
	return st.treeMemo
}

// treeLines renders the model for a page showing the branch that ends at
// at (onBranch holds its ids), the entries' previews read back (fill).
func treeLines(tm *treeModel, ix *tree.Index, leaf, at string, onBranch map[string]bool, link func(id string) string,
	fill func([]*jsonl.Entry) ([]*jsonl.Entry, error)) ([]treeLine, error) {
	if tm.previews == nil {
		var shown []*jsonl.Entry
		for _, s := range tm.segs {
			for _, it := range s.items {
				if it.e != nil {
					shown = append(shown, it.e)
				}
			}
		}
		filled, err := fill(shown)
		if err != nil {
			return nil, err
		}
		tm.previews = make(map[*jsonl.Entry]string, len(shown))
		for i, e := range shown {
			tm.previews[e] = preview(filled[i])
		}
	}
	var out []treeLine
	for _, s := range tm.segs {
		for i, it := range s.items {
			if it.e == nil {
				out = append(out, treeLine{Depth: s.Depth, Gap: it.gap})
				continue
			}
			e := it.e
			l := treeLine{Depth: min(s.Depth, 12), Seg: i == 0, ID: e.ID, URL: link(e.ID), Preview: tm.previews[e],
				Kind: kindOf(e), Leaf: e.ID == leaf, On: onBranch[e.ID], At: e.ID == at}
			if lb, ok := ix.Label(e.ID); ok {
				l.Label = lb
			}
			l.Branch = tm.forks[e.ID]
			out = append(out, l)
		}
	}
	return out, nil
}

// preview is an entry's one line in the tree.
func preview(e *jsonl.Entry) string {
	if e.Raw == nil {
		// Not read back (a long line of a large session).
		switch {
		case e.Role == "toolResult":
			return "tool result"
		case e.Role != "":
			return e.Role
		}
		return e.Type
	}
	return strings.TrimSpace(render.Preview(e))
}

// kindOf is the CSS class of an entry in the tree.
func kindOf(e *jsonl.Entry) string {
	switch e.Type {
	case jsonl.TypeMessage:
		switch e.Role {
		case "user":
			return "user"
		case "assistant":
			return "assistant"
		case "toolResult":
			return "tool"
		}
		return "other"
	case jsonl.TypeCompaction:
		return "compaction"
	case jsonl.TypeBranchSummary:
		return "summary"
	}
	return "note"
}

// treeHTML renders the tree beside the transcript of the branch that ends
// at target (branch), kept per branch shown until the file changes. The
// view's lock is held for reading.
func (st *viewState) treeHTML(branch []*jsonl.Entry, leaf, target, self string, fill func([]*jsonl.Entry) ([]*jsonl.Entry, error)) (template.HTML, error) {
	st.treeMu.Lock()
	defer st.treeMu.Unlock()
	tm := st.treeLocked()
	if h, ok := tm.html[target]; ok {
		return h, nil
	}
	onBranch := make(map[string]bool, len(branch))
	for _, e := range branch {
		onBranch[e.ID] = true
	}
	lines, err := treeLines(tm, st.ix, leaf, target, onBranch, func(id string) string {
		if id == leaf {
			return self + "#e-" + id
		}
		return self + "?at=" + url.QueryEscape(id) + "#e-" + id
	}, fill)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "tree", struct{ Tree []treeLine }{lines}); err != nil {
		return "", err
	}
	if tm.html == nil || len(tm.html) >= 8 {
		tm.html = map[string]template.HTML{}
	}
	h := template.HTML(buf.String()) // rendered by html/template: escaped
	tm.html[target] = h
	return h, nil
}
