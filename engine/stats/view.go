package stats

import (
	"cmp"
	"slices"

	"github.com/sessctl/sessctl/engine"
)

// CountView counts the entries of a view (entries, as engine.View
// holds them, their lines read through it) and those of its branch in
// one pass over the file: the branch's entries are found among all by
// their line's offset (distinct for the lines of one file, and in file
// order along a branch). Where the offsets do not tell them apart (a
// session migrated in memory), the branch is read again.
func CountView(v *engine.View, entries, branch []*engine.Entry) (all, onBranch *Scope, err error) {
	all, onBranch = NewScope(), NewScope()
	byOffset := slices.IsSortedFunc(branch, func(a, b *engine.Entry) int { return cmp.Compare(a.Offset, b.Offset) }) &&
		slices.IsSortedFunc(entries, func(a, b *engine.Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	for i := 1; byOffset && i < len(entries); i++ {
		byOffset = entries[i].Offset != entries[i-1].Offset
	}
	next := 0 // the next branch entry, by offset
	for en, err := range v.Lines(entries) {
		if err != nil {
			return nil, nil, err
		}
		all.Add(en)
		if byOffset && next < len(branch) && branch[next].Offset == en.Offset {
			onBranch.Add(en)
			next++
		}
	}
	if !byOffset || next != len(branch) {
		onBranch = NewScope()
		for en, err := range v.Lines(branch) {
			if err != nil {
				return nil, nil, err
			}
			onBranch.Add(en)
		}
	}
	all.Finish()
	onBranch.Finish()
	return all, onBranch, nil
}
