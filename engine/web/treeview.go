package web

import (
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
// show segmentEnds at each end and the notable entries between.
const (
	segmentShown = 40
	segmentEnds  = 3
)

// buildTree makes the tree model of an index.
func buildTree(ix *tree.Index) *treeModel {
	tm := &treeModel{entries: ix.Len()}
	var cur *segment
	var run []*jsonl.Entry
	flush := func() {
		if cur == nil {
			return
		}
		cur.n = len(run)
		cur.last = run[len(run)-1].ID
		if len(run) <= segmentShown {
			for _, e := range run {
				cur.items = append(cur.items, segItem{e: e})
			}
		} else {
			gap := 0
			for i, e := range run {
				if i < segmentEnds || i >= len(run)-segmentEnds || notable(ix, e) {
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
	// A node starts a segment when it is a root or its parent has
	// several children; the walk gives nodes depth first, so a run goes
	// on exactly while each node is the only child of the one before.
	// A segment hangs one level below the segment its first entry's
	// parent ends (a branch point always ends its segment).
	var prev *tree.Node
	level := map[*tree.Node]int{} // the depth of the segments branch points end
	parent := map[*tree.Node]*tree.Node{}
	tree.Walk(ix.Tree(), func(n *tree.Node, d int) bool {
		if cur == nil || prev == nil || len(prev.Children) != 1 || prev.Children[0] != n {
			flush()
			cur = &segment{}
			if p, ok := parent[n]; ok {
				cur.Depth = level[p] + 1
			}
			tm.segs = append(tm.segs, cur)
		}
		run = append(run, n.Entry)
		if len(n.Children) > 1 {
			level[n] = cur.Depth
			for _, c := range n.Children {
				parent[c] = n
			}
		}
		prev = n
		return true
	}, nil)
	flush()
	return tm
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

// treeMemo returns the tree model of the view's entries, built once per
// change of the file. The view's lock is held for reading.
func (st *viewState) tree() *treeModel {
	if st.treeMemo == nil || st.treeGen != st.gen {
		st.treeMemo = buildTree(st.ix)
		st.treeGen = st.gen
	}
	return st.treeMemo
}

// treeLines renders the model for a page showing the branch that ends at
// at (onBranch holds its ids), the entries' previews read back (fill).
func treeLines(tm *treeModel, ix *tree.Index, leaf, at string, onBranch map[string]bool, link func(id string) string,
	fill func([]*jsonl.Entry) ([]*jsonl.Entry, error)) ([]treeLine, error) {
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
	byPtr := make(map[*jsonl.Entry]*jsonl.Entry, len(shown))
	for i, e := range shown {
		byPtr[e] = filled[i]
	}
	var out []treeLine
	for _, s := range tm.segs {
		for i, it := range s.items {
			if it.e == nil {
				out = append(out, treeLine{Depth: s.Depth, Gap: it.gap})
				continue
			}
			e := byPtr[it.e]
			l := treeLine{Depth: min(s.Depth, 12), Seg: i == 0, ID: e.ID, URL: link(e.ID), Preview: preview(e),
				Kind: kindOf(e), Leaf: e.ID == leaf, On: onBranch[e.ID], At: e.ID == at}
			if lb, ok := ix.Label(e.ID); ok {
				l.Label = lb
			}
			if n := len(ix.Children(e.ID)); n > 1 {
				l.Branch = n
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// preview is an entry's one line in the tree.
func preview(e *jsonl.Entry) string {
	if e.Raw == nil {
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
