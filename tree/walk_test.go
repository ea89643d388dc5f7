package tree_test

import (
	"fmt"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// chainOfRepeats returns levels ids, each written twice, each pair the
// child of the previous id: pi's tree holds every node once per copy
// of every ancestor, 2^(levels+1)-2 node occurrences.
func chainOfRepeats(t *testing.T, levels int) []jsonl.Entry {
	t.Helper()
	var entries []jsonl.Entry
	parent := "null"
	for i := range levels {
		id := fmt.Sprintf("e%d", i)
		for range 2 {
			e, err := jsonl.ParseEntry(fmt.Appendf(nil, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z"}`, id, parent))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
		}
		parent = fmt.Sprintf("%q", id)
	}
	return entries
}

// TestWalkEndsOnChainedRepeatedIDs walks trees of chained repeated ids.
// Small ones are walked in full, every occurrence as pi's tree has it;
// large ones, which would take 2^levels visits, stop after
// MaxRepeatVisits repeat visits.
func TestWalkEndsOnChainedRepeatedIDs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		levels int
		want   int
	}{
		{1, 2},
		{3, 14},
		{10, 1<<11 - 2},
		{100, 100 + tree.MaxRepeatVisits},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.levels), func(t *testing.T) {
			t.Parallel()
			ix := tree.Build(chainOfRepeats(t, tc.levels))
			visits, leaves := 0, 0
			tree.Walk(ix.Tree(), func(*tree.Node, int) bool {
				visits++
				return true
			}, func(*tree.Node, int) { leaves++ })
			if visits != tc.want || leaves != visits {
				t.Errorf("%d visits, %d leaves; want %d of each", visits, leaves, tc.want)
			}
		})
	}
}
