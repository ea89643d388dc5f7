package textindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// termPostings lists each term of the index's only segment with its
// documents (ids) and their positions, and reports whether some term has
// a block shorter than postingBlock before its last (a full block a
// merge copied as it is after a short run of documents).
func termPostings(t *testing.T, ix *Index) (map[string][]string, bool) {
	t.Helper()
	segs, err := ix.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(segs)
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	s := segs[0]
	out := map[string][]string{}
	short := false
	c := s.cursor(s.reader(), 0)
	var it termIter
	dr := s.reader()
	for c.next() {
		if err := it.init(s, s.reader(), c.ti); err != nil {
			t.Fatal(err)
		}
		for _, n := range it.bdocs[:len(it.bdocs)-1] {
			short = short || n != postingBlock
		}
		var l []string
		for it.doc() >= 0 {
			pos, err := it.positions()
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.readDoc(dr, it.doc())
			if err != nil {
				t.Fatal(err)
			}
			l = append(l, fmt.Sprint(d.id, pos))
			if err := it.next(); err != nil {
				t.Fatal(err)
			}
		}
		out[string(c.term)] = l
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	return out, short
}

// TestMergeCopiesFullBlocks: an index built in many segments and merged
// (full blocks copied as they are, twice over: merged segments are
// merged again) holds every term's documents and positions as an index
// of the same documents built in one segment does.
func TestMergeCopiesFullBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var docs []Doc
	for i := range 6000 {
		docs = append(docs, randomDoc(r, uint64(i+1)))
	}
	one, err := Open(vfstest.NewCrashFS(), "/one")
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	b := one.NewBuilder(BuildOptions{Budget: 256 << 20})
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	want, _ := termPostings(t, one)

	many, err := Open(vfstest.NewCrashFS(), "/many")
	if err != nil {
		t.Fatal(err)
	}
	defer many.Close()
	b = many.NewBuilder(BuildOptions{Budget: MinBudget})
	for i, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
		// Commit at uneven points, and merge some segments on the way,
		// so that merged segments with short blocks are merged again.
		if i%1300 == 1299 {
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := many.MergeNewest(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := many.Stats().Segments; n < 3 {
		t.Fatalf("%d segments before the merge: the test merges nothing", n)
	}
	if err := many.Merge(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := many.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, short := termPostings(t, many)
	if !short {
		t.Fatal("no term has a short block before its last: no full block was copied")
	}
	if len(got) != len(want) {
		t.Fatalf("%d terms after the merge, %d in one segment", len(got), len(want))
	}
	for term, w := range want {
		if !slices.Equal(got[term], w) {
			t.Fatalf("%q: postings after the merge differ from one segment's:\n got %.200v\nwant %.200v", term, got[term], w)
		}
	}
}
