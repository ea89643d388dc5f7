package textindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestRiceRoundTrip writes runs of values of many shapes (zeros, small
// gaps, spread positions, outliers with long unary parts, the largest
// uint32) and reads them back exactly; a stream cut short is noticed.
func TestRiceRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		var runs [][]uint32
		for range 1 + r.IntN(5) {
			n := 1 + r.IntN(300)
			vals := make([]uint32, n)
			for i := range vals {
				switch trial % 5 {
				case 0:
					vals[i] = 0
				case 1:
					vals[i] = uint32(r.IntN(8))
				case 2:
					vals[i] = uint32(r.IntN(5000))
				case 3:
					vals[i] = r.Uint32()
				default:
					vals[i] = uint32(r.IntN(4))
					if r.IntN(50) == 0 {
						vals[i] = uint32(r.IntN(1 << 20)) // an outlier
					}
				}
			}
			if trial%7 == 0 {
				vals[0] = ^uint32(0)
			}
			runs = append(runs, vals)
		}
		var w bitWriter
		w.b = []byte{0xAA} // what goes before
		for _, v := range runs {
			w.run(v)
		}
		b := w.flush()
		if b[0] != 0xAA {
			t.Fatal("the writer overwrote what went before")
		}
		rd := bitReader{b: b[1:]}
		for i, want := range runs {
			got := rd.run(nil, len(want))
			if rd.bad || !slices.Equal(got, want) {
				t.Fatalf("trial %d run %d: got %v (bad %v), want %v", trial, i, got, rd.bad, want)
			}
		}
		if (rd.off+7)/8 != uint(len(b)-1) {
			t.Fatalf("trial %d: read %d bits of %d bytes", trial, rd.off, len(b)-1)
		}
		short := bitReader{b: b[1 : len(b)-1]}
		for _, want := range runs {
			short.run(nil, len(want))
		}
		if !short.bad {
			t.Fatalf("trial %d: a stream without its last byte read as whole", trial)
		}
	}
}

// TestPostingsSmallerThanVarints checks the reason for format 2: the
// postings of session-like text take fewer bytes than the uvarints of
// format 1 did (documents, frequencies and positions as they were
// coded), and decode to the same documents and positions.
func TestPostingsSmallerThanVarints(t *testing.T) {
	docs, _ := docsOf(9, 2<<20)
	fsys := vfstest.NewCrashFS()
	ix, err := Open(fsys, "/idx")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	b := ix.NewBuilder(BuildOptions{})
	want := map[string]map[int32][]uint32{} // term -> ordinal -> positions
	for i, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
		var p uint32
		Tokenize(d.Text, func(tk []byte) {
			m := want[string(tk)]
			if m == nil {
				m = map[int32][]uint32{}
				want[string(tk)] = m
			}
			m[int32(i)] = append(m[int32(i)], p)
			p++
		})
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(ix.segs) != 1 {
		t.Fatalf("%d segments", len(ix.segs))
	}
	s := ix.segs[0]
	pr := s.reader()
	defer pr.put()
	var v1 int64
	c := s.cursor(pr, 0)
	for c.next() {
		it, err := newTermIter(s, pr, c.ti)
		if err != nil {
			t.Fatal(err)
		}
		w := want[string(c.term)]
		prev, n := int32(-1), 0
		for ; it.doc() >= 0; n++ {
			pos, err := it.positions()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, w[it.doc()]) || it.freq() != len(pos) {
				t.Fatalf("%q in %d: positions %v, want %v", c.term, it.doc(), pos, w[it.doc()])
			}
			// Format 1: the ordinal or its delta with the one-bit, the
			// frequency unless 1, the first position, then deltas.
			d := uint64(it.doc())
			if prev >= 0 && n%postingBlock != 0 {
				d = uint64(prev - it.doc())
			}
			v1 += int64(len(binary.AppendUvarint(nil, d<<1)))
			if len(pos) > 1 {
				v1 += int64(len(binary.AppendUvarint(nil, uint64(len(pos)))))
			}
			for j, x := range pos {
				if j > 0 {
					x -= pos[j-1]
				}
				v1 += int64(len(binary.AppendUvarint(nil, uint64(x))))
			}
			prev = it.doc()
			if err := it.next(); err != nil {
				t.Fatal(err)
			}
		}
		if n != len(w) {
			t.Fatalf("%q: %d documents, want %d", c.term, n, len(w))
		}
		v1 += c.ti.skipLen
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	got := s.foot.post.len
	t.Logf("postings %d bytes, %d as format 1's uvarints (%.2fx)", got, v1, float64(got)/float64(v1))
	if got*10 > v1*9 {
		t.Fatalf("postings %d bytes, format 1 would take %d: not 10%% smaller", got, v1)
	}
}

// TestOldFormatRefused: a segment of format 1 (its footer sound but for
// the version) is an error matching ErrCorrupt, so the caller rebuilds.
func TestOldFormatRefused(t *testing.T) {
	fsys := vfstest.NewCrashFS()
	ix, _ := build(t, fsys, "/idx", 3, 60, 1<<20)
	name := ix.segs[0].name
	ix.Close()
	p := path.Join("/idx", name)
	data, err := fsys.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	foot := data[len(data)-footerSize:]
	if binary.LittleEndian.Uint32(foot[8:]) != formatVer {
		t.Fatal("the footer's version is not where it is read from")
	}
	binary.LittleEndian.PutUint32(foot[8:], 1)
	binary.LittleEndian.PutUint32(foot[footerSize-4:], crc32c(foot[:footerSize-4]))
	if err := vfs.WriteFileAtomicNoSync(fsys, p, data, vfs.FileMode); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(fsys, "/idx")
	if err == nil {
		ix.Close()
		t.Fatal("an index with a format 1 segment opened")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: %v, want ErrCorrupt", err)
	}
}

// TestKeyOfIgnoresBytesBeyond: a term's key is the same whether it sits
// alone or in a buffer with other bytes after it (the tokenizer's).
func TestKeyOfIgnoresBytesBeyond(t *testing.T) {
	buf := []byte("abcdefghijklmnopqrstuvwxyz")
	for n := 1; n <= len(buf); n++ {
		alone := append([]byte(nil), buf[:n]...)
		if keyOf(buf[:n]) != keyOf(alone[:n:n]) {
			t.Fatalf("%q: key %v in the buffer, %v alone", buf[:n], keyOf(buf[:n]), keyOf(alone[:n:n]))
		}
		if hashTerm(buf[:n]) != hashTerm(alone[:n:n]) {
			t.Fatalf("%q: hashes differ", buf[:n])
		}
	}
}

// TestTableGrowsAndFindsEveryTerm: the slot table starts small, doubles
// up to its planned size as terms come (never past it before full()),
// and every term keeps its number across the doublings.
func TestTableGrowsAndFindsEveryTerm(t *testing.T) {
	m := newMemTable(8<<20, nil)
	start := len(m.slots)
	if start >= m.nslots {
		t.Fatalf("the table starts at %d slots, its planned size %d", start, m.nslots)
	}
	var terms [][]byte
	for i := 0; !m.full(); i++ {
		w := fmt.Appendf(nil, "t%dx%s", i, strings.Repeat("q", i%20))
		if m.needsGrow() {
			m.grow()
		}
		if n := m.lookup(w); n != len(terms) {
			t.Fatalf("new term %q got number %d, want %d", w, n, len(terms))
		}
		terms = append(terms, w)
		if len(m.slots) > m.nslots {
			t.Fatalf("%d slots for %d terms, past the planned %d", len(m.slots), len(terms), m.nslots)
		}
	}
	if len(m.slots) != m.nslots {
		t.Fatalf("full at %d slots, planned %d", len(m.slots), m.nslots)
	}
	for i, w := range terms {
		if n := m.lookup(w); n != i {
			t.Fatalf("%q is number %d, want %d", w, n, i)
		}
	}
	if m.nterms != len(terms) {
		t.Fatalf("%d terms after looking them up again, want %d", m.nterms, len(terms))
	}
}
