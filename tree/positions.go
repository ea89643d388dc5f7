package tree

import (
	"slices"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// ParentPositions returns, for each of entries, the position in entries
// of the entry Build(entries).BranchFrom steps to from it (the last
// entry, headers aside, whose key is its parent key), or -1 where that
// walk ends (no parent, an empty parent id, a parent no entry has, or a
// header, which no walk reaches). With it, BranchAt walks a branch
// without the index's map: the engine's offset index keeps it, so that
// reading a context from the index builds no map of ids.
func ParentPositions(entries []Entry) []int32 {
	byID := make(map[string]int32, len(entries))
	keyed := 0
	for i := range entries {
		if !entries[i].IsHeader() {
			byID[Key(&entries[i])] = int32(i)
			keyed++
		}
	}
	return parentPositions(entries, len(byID) == keyed, func(key string) (int32, bool) {
		pos, ok := byID[key]
		return pos, ok
	})
}

// ParentPositions is ParentPositions(entries) answered from the index's
// own map, when the index holds exactly the entries of entries that are
// not headers, in order (it was built from entries, or from entries
// after a first header, and nothing was added since): a session that
// has built its index needs no second map of ids. ok is false, and
// nothing is returned, when the index holds other entries or is nil.
func (ix *Index) ParentPositions(entries []Entry) (parents []int32, ok bool) {
	if ix == nil {
		return nil, false
	}
	at := make([]int32, len(ix.entries)) // the position in entries of each entry of the index
	k := 0
	for i := range entries {
		if entries[i].IsHeader() {
			continue
		}
		if k == len(ix.entries) || ix.entries[k] != &entries[i] {
			return nil, false
		}
		at[k] = int32(i)
		k++
	}
	if k != len(ix.entries) {
		return nil, false
	}
	return parentPositions(entries, !ix.dups, func(key string) (int32, bool) {
		pos, ok := ix.byID[key]
		if !ok {
			return 0, false
		}
		return at[pos], true
	}), true
}

// parentPositions is ParentPositions with the entries' map of ids given
// as lookup (the position of the last entry, headers aside, with a key);
// unique says no key repeats.
func parentPositions(entries []jsonl.Entry, unique bool, lookup func(key string) (int32, bool)) []int32 {
	parents := make([]int32, len(entries))
	for i := range entries {
		e := &entries[i]
		parents[i] = -1
		if e.IsHeader() {
			continue
		}
		p, ok := ParentKey(e)
		if !ok || p == "" {
			continue
		}
		// Where no key repeats, an entry whose parent is the entry before
		// it (most are) needs no lookup: that entry is the only one with
		// the key.
		if prev := &entries[max(i-1, 0)]; unique && i > 0 && !prev.IsHeader() && Key(prev) == p {
			parents[i] = int32(i - 1)
		} else if next, ok := lookup(p); ok {
			parents[i] = next
		}
	}
	return parents
}

// LastWithKey returns the position in entries of the last entry, headers
// aside, whose key is key (the entry Build(entries).Get(key) returns),
// or -1 when there is none.
func LastWithKey(entries []Entry, key string) int {
	for i := len(entries) - 1; i >= 0; i-- {
		if e := &entries[i]; !e.IsHeader() && Key(e) == key {
			return i
		}
	}
	return -1
}

// BranchAt returns Build(entries).BranchFrom(&entries[start]), the path
// from the root to entries[start], given parents, the entries'
// ParentPositions, without a map: one array step per entry. It checks
// each step (the parent's key is the entry's parent key) and returns
// false when parents does not fit entries.
func BranchAt(entries []Entry, parents []int32, start int) ([]*Entry, bool) {
	if len(parents) != len(entries) || start < 0 || start >= len(entries) {
		return nil, false
	}
	// Count the steps first (the positions alone, a small array), so the
	// path is made once, at its size, and filled from its end.
	n := 0
	for cur := start; cur >= 0 && n <= len(entries); n++ {
		if cur >= len(entries) {
			return nil, false
		}
		cur = int(parents[cur])
	}
	if n > len(entries) {
		return branchAtCycle(entries, parents, start)
	}
	path := make([]*jsonl.Entry, n)
	cur := start
	for i := n - 1; i >= 0; i-- {
		e := &entries[cur]
		path[i] = e
		if i == 0 {
			break
		}
		next := int(parents[cur])
		if p, ok := ParentKey(e); !ok || p == "" || entries[next].IsHeader() || Key(&entries[next]) != p {
			return nil, false
		}
		cur = next
	}
	return path, true
}

// branchAtCycle is BranchAt on a walk that comes back to an entry:
// BranchFrom's answer, the path up to the first repeated entry.
func branchAtCycle(entries []jsonl.Entry, parents []int32, start int) ([]*jsonl.Entry, bool) {
	var path []*jsonl.Entry
	seen := make([]bool, len(entries))
	for cur := start; cur >= 0 && !seen[cur]; {
		seen[cur] = true
		e := &entries[cur]
		path = append(path, e)
		next := int(parents[cur])
		if next < 0 {
			break
		}
		if p, ok := ParentKey(e); !ok || p == "" || entries[next].IsHeader() || Key(&entries[next]) != p {
			return nil, false
		}
		cur = next
	}
	slices.Reverse(path)
	return path, true
}
