package compaction

import (
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// A Leaf names an entry, the explicit null leaf, or none (the last
// entry); IndexLeaf reads the one an index holds; and NullLeaf is a
// function, so no caller can change another's.
func TestLeaf(t *testing.T) {
	ix := branchTree(t)
	count := func(l Leaf) int { return len(Build(ix, l).Messages) }
	if n := count(LeafID("c")); n != 3 {
		t.Errorf("LeafID(c): %d messages, want 3 (a, b, c)", n)
	}
	if n := count(Leaf{}); n != 4 {
		t.Errorf("the zero Leaf: %d messages, want 4 (the last entry g: a, b, f, g)", n)
	}
	if n := count(LeafID("nope")); n != 4 {
		t.Errorf("an unknown id: %d messages, want the last entry's 4", n)
	}
	if n := count(NullLeaf()); n != 0 || !NullLeaf().IsNull() || NullLeaf().ID() != "" {
		t.Errorf("NullLeaf: %d messages, IsNull %v, want 0 and true", n, NullLeaf().IsNull())
	}
	ix.SetLeaf("d", jsonl.KindString)
	if l := IndexLeaf(ix); l.ID() != "d" || count(l) != 4 {
		t.Errorf("IndexLeaf after SetLeaf(d) = %q with %d messages, want d with 4 (a-d)", l.ID(), count(l))
	}
	ix.SetLeaf("", jsonl.KindNull)
	if l := IndexLeaf(ix); !l.IsNull() || count(l) != 0 {
		t.Errorf("IndexLeaf after SetLeaf(null) = %+v, want the null leaf", l)
	}
	ix.SetLeaf("", jsonl.KindAbsent)
	if l := IndexLeaf(ix); l != (Leaf{}) {
		t.Errorf("IndexLeaf with no leaf = %+v, want the zero Leaf", l)
	}
}
