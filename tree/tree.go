package tree

import (
	"math"
	"slices"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Index is the in-memory index of one session's entries (headers
// excluded), with the answers pi's SessionManager gives: entries by id,
// children, the leaf, root-to-leaf branches, the tree, labels and the
// session name. It never loops on cycles, self-parents or duplicate ids.
//
// An Index is not safe for concurrent use; the engine guards it.
type Index struct {
	entries []*jsonl.Entry
	byID    map[string]int // key -> position in entries of the LAST entry with it
	dups    bool           // some id occurs more than once

	// order (keys in first-appearance order, the order of pi's byId map)
	// and children (parent key -> child keys in that order) are built on
	// first use: opening a large session for its context needs neither.
	order    []string
	children map[string][]string
	derived  bool

	leaf     string
	leafKind jsonl.Kind // KindAbsent: undefined; KindNull: null; KindString: an entry key

	labels   map[string]labelVal
	labelSeq int

	name    string
	hasName bool
}

type labelVal struct {
	text string
	seq  int    // insertion order of the Map key, for createBranchedSession
	ts   []byte // the timestamp member of the label entry that set it, as JSON; nil when it has none
}

// Key returns the index key of an entry's id. String ids are themselves;
// a missing id and non-string ids get keys no string id can equal.
func Key(e *Entry) string {
	switch e.IDKind {
	case jsonl.KindString:
		return e.ID
	case jsonl.KindAbsent:
		return absentKey
	}
	return e.ID
}

// ParentKey returns the index key of an entry's parentId, and false for a
// null or missing parent.
func ParentKey(e *Entry) (string, bool) {
	switch e.ParentKind {
	case jsonl.KindNull, jsonl.KindAbsent:
		return "", false
	}
	return e.ParentID, true
}

const absentKey = "\x01absent"

// Build indexes entries in file order. Header entries are skipped.
func Build(entries []Entry) *Index {
	ix := &Index{
		entries:  make([]*jsonl.Entry, 0, len(entries)),
		byID:     make(map[string]int, len(entries)),
		labels:   make(map[string]labelVal),
		leafKind: jsonl.KindNull,
	}
	for i := range entries {
		if entries[i].IsHeader() {
			continue
		}
		ix.Add(&entries[i])
	}
	return ix
}

// Add appends one entry, as loading the next line or appending does. The
// leaf moves to it.
func (ix *Index) Add(e *Entry) {
	k := Key(e)
	pos := len(ix.entries)
	ix.entries = append(ix.entries, e)
	// One map operation: the map grows unless the id was already there.
	n := len(ix.byID)
	ix.byID[k] = pos
	if len(ix.byID) == n {
		ix.dups = true
		ix.derived = false
	} else if ix.derived {
		ix.order = append(ix.order, k)
		if p, ok := ParentKey(e); ok {
			ix.children[p] = append(ix.children[p], k)
		}
	}
	if e.IDKind == jsonl.KindAbsent {
		ix.leaf, ix.leafKind = "", jsonl.KindAbsent
	} else {
		ix.leaf, ix.leafKind = k, jsonl.KindString
	}
	switch e.Type {
	case jsonl.TypeLabel:
		target, _ := e.StringField("targetId")
		if t, ok := e.Field("targetId"); ok && jsonl.KindOf(t) != jsonl.KindString {
			target = "\x00" + string(t)
		}
		if label, ok := e.StringField("label"); ok && label != "" {
			ts, _ := e.Field("timestamp")
			if old, exists := ix.labels[target]; exists {
				old.text, old.ts = label, ts
				ix.labels[target] = old
			} else {
				ix.labelSeq++
				ix.labels[target] = labelVal{text: label, seq: ix.labelSeq, ts: ts}
			}
		} else {
			delete(ix.labels, target)
		}
	case jsonl.TypeSessionInfo:
		// The latest session_info in file order wins, and an empty or
		// blank name clears the name (pi 0.73.1; 0.58.3 skipped empty
		// names). A name that is not a string clears it too (pi throws).
		n, _ := e.StringField("name")
		ix.name = jsonl.JSTrim(n)
		ix.hasName = ix.name != ""
	}
}

// Len returns the number of entries, duplicates included.
func (ix *Index) Len() int { return len(ix.entries) }

// Entries returns every entry in file order, duplicates included. The
// slice is shared; callers must not modify it.
func (ix *Index) Entries() []*Entry { return ix.entries }

// Get returns the entry with the given id (the last one, when an id is
// repeated).
func (ix *Index) Get(id string) (*Entry, bool) {
	p, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return ix.entries[p], true
}

// Has reports whether an entry with the id exists.
func (ix *Index) Has(id string) bool { _, ok := ix.byID[id]; return ok }

// Leaf returns the leaf id. kind is KindString for an entry id, KindNull
// for an explicit null leaf (empty session, reset leaf) and KindAbsent when
// the last entry had no id (pi's undefined).
func (ix *Index) Leaf() (id string, kind Kind) { return ix.leaf, ix.leafKind }

// SetLeaf moves the leaf to an existing entry id, or to null with
// KindNull. It does not check the id; callers do.
func (ix *Index) SetLeaf(id string, kind Kind) { ix.leaf, ix.leafKind = id, kind }

// LeafEntry returns the leaf's entry, if the leaf names one.
func (ix *Index) LeafEntry() (*Entry, bool) {
	switch ix.leafKind {
	case jsonl.KindString:
		return ix.Get(ix.leaf)
	case jsonl.KindAbsent:
		return ix.Get(absentKey)
	}
	return nil, false
}

// Branch returns the path from the root to the entry with the given id,
// root first, following parent links through the index. An unknown or
// empty id gives nil. A parent cycle (which makes pi loop forever) ends the
// path at the first repeated entry.
func (ix *Index) Branch(id string) []*Entry {
	start, ok := ix.byID[id]
	if !ok || id == "" {
		return nil
	}
	return ix.BranchFrom(ix.entries[start])
}

// BranchFrom returns the path from the root to e, root first; e itself need
// not be the indexed copy of its id (pi's context builder starts from the
// last line).
func (ix *Index) BranchFrom(e *Entry) []*Entry {
	// One walk, the slice grown as it goes: a second walk to size it
	// first costs a map lookup per entry, far more than the growth.
	var path []*jsonl.Entry
	var seen map[*jsonl.Entry]bool
	cur := e
	for steps := 0; cur != nil; steps++ {
		if seen == nil && steps > len(ix.byID)+1 {
			// More steps than entries: there is a cycle. Walk again,
			// remembering where we have been.
			seen = make(map[*jsonl.Entry]bool)
			path = path[:0]
			cur = e
		}
		if seen != nil {
			if seen[cur] {
				break
			}
			seen[cur] = true
		}
		path = append(path, cur)
		p, ok := ParentKey(cur)
		if !ok || p == "" {
			break
		}
		next, ok := ix.byID[p]
		if !ok {
			break
		}
		cur = ix.entries[next]
	}
	slices.Reverse(path)
	return path
}

// depth counts the entries from e to its root, stopping at len(byID)+1 on
// a cycle: the exact size of BranchFrom's result on a long session.
func (ix *Index) depth(e *jsonl.Entry) int {
	n := 0
	for cur := e; cur != nil && n <= len(ix.byID); n++ {
		p, ok := ParentKey(cur)
		if !ok || p == "" {
			return n + 1
		}
		next, ok := ix.byID[p]
		if !ok {
			return n + 1
		}
		cur = ix.entries[next]
	}
	return n
}

// Loop reports whether the walk from the entry with id towards its root
// runs into a parent-id loop (a cycle, or an entry that is its own
// parent), the walk on which pi's getBranch never ends, and returns the
// entry at which the walk first comes back to an entry it has visited.
// An unknown id gives false. Like BranchFrom it counts steps and only
// remembers where it has been once there are more steps than entries, so
// a long chain without a loop costs no memory.
func (ix *Index) Loop(id string) (*Entry, bool) {
	start, ok := ix.byID[id]
	if !ok || id == "" {
		return nil, false
	}
	if ix.depth(ix.entries[start]) <= len(ix.byID) {
		return nil, false
	}
	seen := make(map[*jsonl.Entry]bool)
	for cur := ix.entries[start]; cur != nil; {
		if seen[cur] {
			return cur, true
		}
		seen[cur] = true
		p, ok := ParentKey(cur)
		if !ok || p == "" {
			return nil, false
		}
		next, ok := ix.byID[p]
		if !ok {
			return nil, false
		}
		cur = ix.entries[next]
	}
	return nil, false
}

// LeafBranch returns Branch of the current leaf, or nil when the leaf is
// null or undefined.
func (ix *Index) LeafBranch() []*Entry {
	if ix.leafKind != jsonl.KindString {
		return nil
	}
	return ix.Branch(ix.leaf)
}

// Children returns the ids of the entries whose parentId is parent, in
// first-appearance order of ids (pi's getChildren). A repeated id counts
// with the parent of its last copy.
func (ix *Index) Children(parent string) []string {
	ix.derive()
	return ix.children[parent]
}

// derive builds order and children from the entries.
func (ix *Index) derive() {
	if ix.derived {
		return
	}
	ix.order = make([]string, 0, len(ix.byID))
	ix.children = make(map[string][]string)
	var seen map[string]bool
	if ix.dups {
		seen = make(map[string]bool, len(ix.byID))
	}
	for _, e := range ix.entries {
		k := Key(e)
		if seen != nil {
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		ix.order = append(ix.order, k)
		// A repeated id counts with the parent of its last copy.
		last := ix.entries[ix.byID[k]]
		if p, ok := ParentKey(last); ok {
			ix.children[p] = append(ix.children[p], k)
		}
	}
	ix.derived = true
}

// IDs returns the distinct ids in first-appearance order.
func (ix *Index) IDs() []string {
	ix.derive()
	return ix.order
}

// Label returns the label of an entry id. Labels are global: they apply
// whichever branch the target is on, and may name ids that do not exist.
func (ix *Index) Label(id string) (string, bool) {
	l, ok := ix.labels[id]
	return l.text, ok
}

// LabelTimestamp returns the timestamp of the label entry that set id's
// label, as the JSON it was written as (pi 0.73.1's labelTimestamp:
// createBranchedSession copies it); false when id has no label or that
// entry has no timestamp.
func (ix *Index) LabelTimestamp(id string) ([]byte, bool) {
	l, ok := ix.labels[id]
	if !ok || l.ts == nil {
		return nil, false
	}
	return slices.Clone(l.ts), true
}

// LabelPair is one label in the order pi's labelsById map iterates.
type LabelPair struct {
	Target string
	Label  string
}

// Labels returns every label in insertion order of its target (a target
// whose label was cleared and set again moves to the end).
func (ix *Index) Labels() []LabelPair {
	out := make([]LabelPair, 0, len(ix.labels))
	for t, l := range ix.labels {
		out = append(out, LabelPair{t, l.text})
	}
	slices.SortFunc(out, func(a, b LabelPair) int {
		return ix.labels[a.Target].seq - ix.labels[b.Target].seq
	})
	return out
}

// Name returns the session name: the trimmed name of the last
// session_info entry in file order, whatever branch it is on; false when
// that name is empty or blank (it clears the name) or there is none (pi
// 0.73.1's getSessionName).
func (ix *Index) Name() (string, bool) { return ix.name, ix.hasName }

// Node is one node of Tree.
type Node struct {
	Entry    *Entry
	Key      string
	Label    string
	HasLabel bool
	// LabelTimestamp is the timestamp of the label entry that set Label,
	// as JSON (pi 0.73.1's labelTimestamp); nil when that entry has none.
	LabelTimestamp []byte
	Children       []*Node

	time float64 // Date.parse of the entry's timestamp, the sort key
}

// Tree returns the session as pi's getTree does: roots in file order
// (entries with a null parent, a self parent, or a parent that is not an
// entry), every other entry under its parent in file order, then children
// stably sorted by timestamp. A repeated id makes its node appear once per
// copy. Entries on a parent cycle appear nowhere. A node can be its own
// ancestor only through repeated ids; Walk cuts such repeats.
func (ix *Index) Tree() []*Node {
	ix.derive()
	nodes := make(map[string]*Node, len(ix.order))
	for _, k := range ix.order {
		e := ix.entries[ix.byID[k]]
		n := &Node{Entry: e, Key: k}
		if l, ok := ix.labels[k]; ok {
			n.Label, n.HasLabel = l.text, true
			if l.ts != nil {
				n.LabelTimestamp = slices.Clone(l.ts)
			}
		}
		nodes[k] = n
	}
	var roots []*Node
	for _, e := range ix.entries {
		k := Key(e)
		n := nodes[k]
		p, ok := ParentKey(e)
		if !ok || p == k {
			// null, missing (pi looks it up, finds nothing) or self parent.
			roots = append(roots, n)
			continue
		}
		if parent, ok := nodes[p]; ok {
			parent.Children = append(parent.Children, n)
		} else {
			roots = append(roots, n)
		}
	}
	// Sort keys once per node: Date.parse of the timestamp (NaN, which
	// compares as neither less nor greater, when it does not parse).
	for _, n := range nodes {
		v, ok := jsonl.ParseDate(n.Entry.Timestamp)
		if !ok {
			v = math.NaN()
		}
		n.time = v
	}
	// Each node's children are sorted once; a node met again (a repeated
	// id) was fully handled the first time, so its subtree is skipped.
	sorted := make(map[*Node]bool, len(nodes))
	Walk(roots, func(n *Node, _ int) bool {
		if sorted[n] {
			return false
		}
		if len(n.Children) > 1 {
			slices.SortStableFunc(n.Children, func(a, b *Node) int {
				switch {
				case a.time < b.time:
					return -1
				case a.time > b.time:
					return 1
				}
				return 0
			})
		}
		sorted[n] = true
		return true
	}, nil)
	return roots
}

// MaxRepeatVisits bounds the visits Walk makes to nodes it has visited
// before.
const MaxRepeatVisits = 1 << 20

// Walk visits the forest depth first, parents before children, in order.
// enter returns false to skip a node's children; leave, when not nil, runs
// after a node's children (also when they were skipped). A node that is
// already on the current path (possible only with repeated ids) is not
// visited again, so Walk always ends. It uses an explicit stack: depth is
// not limited by the goroutine stack.
//
// A node that is a child of several nodes (a repeated id) is visited once
// per occurrence, as pi's tree repeats it, but Walk makes at most
// MaxRepeatVisits such repeat visits in all and then skips nodes it has
// seen: chained repeated ids make pi's tree grow exponentially (100 lines
// would take longer than anyone waits), and a walk must end.
func Walk(roots []*Node, enter func(n *Node, depth int) bool, leave func(n *Node, depth int)) {
	type frame struct {
		n    *Node
		next int
	}
	onPath := make(map[*Node]bool)
	seen := make(map[*Node]bool)
	repeats := 0
	var stack []frame
	visit := func(n *Node) {
		if seen[n] {
			if repeats >= MaxRepeatVisits {
				return
			}
			repeats++
		}
		seen[n] = true
		if enter(n, len(stack)) {
			onPath[n] = true
			stack = append(stack, frame{n: n})
		} else if leave != nil {
			leave(n, len(stack))
		}
	}
	for _, r := range roots {
		visit(r)
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next >= len(top.n.Children) {
				n := top.n
				delete(onPath, n)
				stack = stack[:len(stack)-1]
				if leave != nil {
					leave(n, len(stack))
				}
				continue
			}
			c := top.n.Children[top.next]
			top.next++
			if !onPath[c] {
				visit(c)
			}
		}
	}
}
