package textindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// build makes an index of n random documents in dir, committed, in
// several segments.
func build(t *testing.T, fsys vfs.FS, dir string, seed uint64, n int, budget int64) (*Index, *model) {
	t.Helper()
	ix, err := Open(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	m := &model{}
	b := ix.NewBuilder(BuildOptions{Budget: budget})
	for i := range n {
		d := randomDoc(r, uint64(i+1))
		d.Text += " every"
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
		m.add(d)
		if i%(n/3) == n/3-1 {
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return ix, m
}

// everything reads every part of an index: open, verify, and queries
// that touch every term's postings and every document.
func everything(fsys vfs.FS, dir string) error {
	ix, err := Open(fsys, dir)
	if err != nil {
		return err
	}
	defer ix.Close()
	if err := ix.Verify(context.Background()); err != nil {
		return err
	}
	for _, w := range append(slices.Clone(vocab), "every") {
		if _, err := ix.Search(context.Background(), Query{Clauses: ParseQuery(w)}); err != nil {
			return err
		}
	}
	return nil
}

// TestFlippedByteIsCorrupt flips bytes all over each file of an index:
// every flip is found (ErrCorrupt), by Open, Verify or a query.
func TestFlippedByteIsCorrupt(t *testing.T) {
	fsys := vfstest.NewCrashFS()
	ix, _ := build(t, fsys, "/idx", 1, 300, MinBudget)
	st := ix.Stats()
	ix.Close()
	if st.Segments < 3 {
		t.Fatalf("want several segments, got %d", st.Segments)
	}
	if err := everything(fsys, "/idx"); err != nil {
		t.Fatalf("the undamaged index: %v", err)
	}
	ents, err := fsys.ReadDir("/idx")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	flips := 0
	for _, e := range ents {
		p := path.Join("/idx", e.Name())
		orig, err := fsys.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Every byte of the header, the footer and the manifest, and
		// random ones elsewhere.
		var offs []int
		for i := range orig {
			edge := i < headerSize || i >= len(orig)-footerSize
			if edge && len(offs) < 200 || e.Name() == ManifestName && r.IntN(4) == 0 || r.IntN(1000) == 0 {
				offs = append(offs, i)
			}
		}
		for _, off := range offs {
			bad := slices.Clone(orig)
			bad[off] ^= 1 << r.IntN(8)
			if err := vfs.WriteFileAtomicNoSync(fsys, p, bad, vfs.FileMode); err != nil {
				t.Fatal(err)
			}
			err := everything(fsys, "/idx")
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s with byte %d of %d flipped: %v, want ErrCorrupt", e.Name(), off, len(orig), err)
			}
			flips++
		}
		if err := vfs.WriteFileAtomicNoSync(fsys, p, orig, vfs.FileMode); err != nil {
			t.Fatal(err)
		}
	}
	// Cut short, grown, missing: doubtful too.
	seg := ""
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".seg") {
			seg = path.Join("/idx", e.Name())
		}
	}
	orig, _ := fsys.ReadFile(seg)
	for name, data := range map[string][]byte{"cut": orig[:len(orig)-1], "grown": append(slices.Clone(orig), 0)} {
		if err := vfs.WriteFileAtomicNoSync(fsys, seg, data, vfs.FileMode); err != nil {
			t.Fatal(err)
		}
		if err := everything(fsys, "/idx"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a %s segment: %v, want ErrCorrupt", name, err)
		}
	}
	if err := fsys.Remove(seg); err != nil {
		t.Fatal(err)
	}
	if err := everything(fsys, "/idx"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a missing segment: %v, want ErrCorrupt", err)
	}
	t.Logf("%d flips detected", flips)
}

// TestQueryFindsDamage: a query that reads a damaged postings page fails
// with ErrCorrupt (Open checks only what it reads).
func TestQueryFindsDamage(t *testing.T) {
	fsys := vfstest.NewCrashFS()
	ix, _ := build(t, fsys, "/idx", 2, 300, 1<<20)
	if err := ix.Merge(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := ix.Stats()
	segPath := path.Join("/idx", ix.segs[0].name)
	post := ix.segs[0].foot.post
	ix.Close()
	if st.Segments != 1 {
		t.Fatalf("%d segments", st.Segments)
	}
	data, _ := fsys.ReadFile(segPath)
	// The first postings page: find its physical offset.
	p := post.off / pageSize
	data[physOff(p)+post.off%pageSize] ^= 0x40
	if err := vfs.WriteFileAtomicNoSync(fsys, segPath, data, vfs.FileMode); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(fsys, "/idx")
	if err != nil {
		t.Fatalf("open (the damage is in a postings page): %v", err)
	}
	defer ix.Close()
	var errs int
	for _, w := range vocab {
		if _, err := ix.Search(context.Background(), Query{Clauses: ParseQuery(w)}); errors.Is(err, ErrCorrupt) {
			errs++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if errs == 0 {
		t.Fatal("no query found the damaged page")
	}
}

// TestCrashAtAnyPoint crashes a commit and a merge at every file
// operation (each time with several choices of what unsynced data
// survives): the index opens, whole, as the old or the new manifest's.
func TestCrashAtAnyPoint(t *testing.T) {
	crash := vfstest.NewCrashFS()
	ffs := vfstest.NewFaultFS(crash)
	ix, m := build(t, ffs, "/idx", 4, 150, MinBudget)
	before := m.ids()
	type snap struct {
		fs    *vfstest.CrashFS
		stage string
	}
	var snaps []snap
	stage := ""
	ffs.SetHook(func(op vfstest.Op, p string) error {
		if op.Mutates() {
			for k := range 3 {
				var rng *rand.Rand
				if k > 0 {
					rng = rand.New(rand.NewPCG(uint64(len(snaps)), uint64(k)))
				}
				snaps = append(snaps, snap{crash.CrashClone(rng), stage + " before " + op.String() + " " + p})
			}
		}
		return nil
	})
	// A second commit of new documents.
	stage = "commit"
	r := rand.New(rand.NewPCG(5, 5))
	b := ix.NewBuilder(BuildOptions{Budget: MinBudget})
	for i := range 150 {
		d := randomDoc(r, uint64(1000+i))
		d.Text += " every"
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
		m.add(d)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	after := m.ids()
	nCommit := len(snaps)
	stage = "merge"
	if err := ix.Merge(context.Background()); err != nil {
		t.Fatal(err)
	}
	ffs.SetHook(nil)
	snaps = append(snaps, snap{crash.CrashClone(nil), "after the merge"})
	if ix.Stats().Segments != 1 {
		t.Fatalf("merge left %d segments", ix.Stats().Segments)
	}
	ix.Close()
	seen := map[string]bool{}
	for i, s := range snaps {
		got, err := everyID(s.fs)
		if err != nil {
			t.Fatalf("crash %d (%s): %v", i, s.stage, err)
		}
		switch {
		case slices.Equal(got, before) && i < nCommit:
			seen["old"] = true
		case slices.Equal(got, after):
			seen["new"] = true
		default:
			t.Fatalf("crash %d (%s): the index holds %d documents, neither the old %d nor the new %d", i, s.stage, len(got), len(before), len(after))
		}
		if err := everything(s.fs, "/idx"); err != nil {
			t.Fatalf("crash %d (%s): %v", i, s.stage, err)
		}
	}
	if !seen["old"] || !seen["new"] {
		t.Fatalf("the crashes saw %v: the test does not cover both sides", seen)
	}
	t.Logf("%d crash points", len(snaps))
}

func (m *model) ids() []uint64 {
	var out []uint64
	for i := len(m.docs) - 1; i >= 0; i-- {
		out = append(out, m.docs[i].ID)
	}
	return out
}

// everyID opens the index and lists its documents, newest first.
func everyID(fsys vfs.FS) ([]uint64, error) {
	ix, err := Open(fsys, "/idx")
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	hits, err := ix.Search(context.Background(), Query{Clauses: ParseQuery("every")})
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, h := range hits {
		out = append(out, h.ID)
	}
	if st := ix.Stats(); st.Docs != int64(len(out)) {
		return nil, fmt.Errorf("stats say %d documents, the query found %d", st.Docs, len(out))
	}
	return out, nil
}

// TestMemoryBudget: the in-memory table, counted in bytes of its
// blocks, never holds more than the budget plus one document's worth,
// and it is written out as several segments that hold every document.
func TestMemoryBudget(t *testing.T) {
	for _, budget := range []int64{MinBudget, 1 << 20, 4 << 20} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			fsys := vfstest.NewCrashFS()
			ix, err := Open(fsys, "/idx")
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			b := ix.NewBuilder(BuildOptions{Budget: budget})
			var worst int64
			var cur int
			b.onAdd = func(b *Builder) {
				// One document can add, per term, 10 bytes of varints
				// (twice that with its chain's slack and pointers), a
				// new term's state and bytes and a first slice; and a
				// page of the pool and a chunk of terms or documents.
				bound := budget + int64(cur)*(20+72+MaxTermLen/4) + poolPage + termChunk*64 + docChunk*48
				if n := b.MemBytes(); n > bound {
					t.Fatalf("the table holds %d bytes after a %d-byte document, budget %d (bound %d)", n, cur, budget, bound)
				}
				worst = max(worst, b.MemBytes()-budget)
			}
			r := rand.New(rand.NewPCG(uint64(budget), 1))
			var total int64
			n := 0
			for total < 8*budget {
				d := randomDoc(r, uint64(n+1))
				// Unique words too, so that the term table grows.
				d.Text += fmt.Sprintf(" w%d u%x", n, r.Uint64())
				cur = len(d.Text)
				total += int64(len(d.Text))
				if err := b.Add(d); err != nil {
					t.Fatal(err)
				}
				n++
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			st := ix.Stats()
			if st.Segments < 2 || st.Docs != int64(n) {
				t.Fatalf("%d segments with %d documents, want several with %d", st.Segments, st.Docs, n)
			}
			if b.PeakMemBytes() < budget/2 {
				t.Fatalf("peak %d of budget %d: the budget was not what cut the segments", b.PeakMemBytes(), budget)
			}
			// The count is the memory: the blocks' sizes add up to it.
			m := b.mem
			var real int64 = int64(cap(m.slots)) * 8
			for _, c := range m.terms {
				real += int64(cap(c)) * int64(unsafe.Sizeof(memTerm{}))
			}
			for _, p := range m.pages {
				real += int64(cap(p))
			}
			for _, c := range m.docs {
				real += int64(cap(c)) * 40
			}
			if real+m.toolsz != m.memBytes() {
				t.Fatalf("memBytes %d, the blocks hold %d", m.memBytes(), real+m.toolsz)
			}
			t.Logf("%d segments; at most %d bytes over the budget", st.Segments, max(worst, 0))
		})
	}
}
