package textindex

import (
	"math/rand/v2"
	"testing"
)

// TestBlocksReused: a block given back is handed out again, zeroed, and
// a build of many tables maps no more memory after its first two (one
// taking documents, one being written out): the tables written out give
// their blocks to the next ones.
func TestBlocksReused(t *testing.T) {
	p := newBlocks()
	if p == nil {
		t.Skip("no mapped memory on this platform: blocks come from the heap")
	}
	b := p.get(poolPage)
	for i := range b {
		b[i] = 0xff
	}
	p.put(b)
	c := p.get(poolPage)
	if &c[0] != &b[0] {
		t.Fatal("a block given back was not handed out again")
	}
	for i, v := range c {
		if v != 0 {
			t.Fatalf("byte %d of a reused block is %#x", i, v)
		}
	}

	ix, err := Open(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	bl := ix.NewBuilder(BuildOptions{Budget: MinBudget})
	r := rand.New(rand.NewPCG(1, 1))
	slabs := func() int {
		bl.blk.m.mu.Lock()
		defer bl.blk.m.mu.Unlock()
		return len(bl.blk.m.slabs)
	}
	var after3 int
	flushes := 0
	for i := 0; flushes < 12; i++ {
		out := bl.out
		if err := bl.Add(randomDoc(r, uint64(i+1))); err != nil {
			t.Fatal(err)
		}
		if bl.out != out {
			if flushes++; flushes == 3 {
				after3 = slabs()
			}
		}
	}
	if err := bl.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := slabs(); n > after3+1 {
		t.Errorf("%d slabs mapped after 12 tables, %d after 3: the blocks are not reused", n, after3)
	}
	if st := ix.Stats(); st.Segments == 0 || st.Docs == 0 {
		t.Errorf("stats %+v after the build", st)
	}
	bl.Close()
	if n := slabs(); n != 0 {
		t.Errorf("%d slabs mapped after Close", n)
	}
	if err := bl.Add(randomDoc(r, 1<<40)); err == nil {
		t.Error("Add after Close: no error")
	}
}
