package textindex

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Merge merges the index's segments into one when it has more than one,
// with a k-way merge of their dictionaries that streams the postings:
// its memory is bounded by a few pages per segment, the postings of one
// term block and the dictionary index of the output (the dictionary
// itself goes to a temporary file when large). Searches go on meanwhile
// on the old segments, and see the merged one after Merge commits; a
// Builder may commit at the same time (its segments are newer and stay
// as they are). The old files are removed once no search uses them.
// Merges of one Index run one at a time.
func (ix *Index) Merge(ctx context.Context) error {
	return ix.merge(ctx, func(segs []*segment) []*segment { return segs })
}

// MergeNewest merges, as Merge does, a run of adjacent segments into
// one: the newest and each older one no more than twice the size of the
// newer ones together; or, when that would leave more than keep, the
// adjacent segments, as many as leaves keep, that hold the fewest bytes,
// unless one segment holds more than four times the rest of them (then
// the newest run, when it is two segments or more, and more than keep
// are left).
// Many small updates' segments are so merged among themselves, and the
// large segment of a first build is merged again only when every choice
// holds it (keep segments that are all large), so an update never
// rewrites a gigabyte because an older segment beside it is small.
func (ix *Index) MergeNewest(ctx context.Context, keep int) error {
	return ix.merge(ctx, func(segs []*segment) []*segment {
		lo, hi := mergeRun(segs, keep)
		return segs[lo:hi]
	})
}

// mergeRun returns the run of segs MergeNewest merges.
func mergeRun(segs []*segment, keep int) (lo, hi int) {
	at := len(segs) - 1
	acc := segs[at].size
	for at > 0 && segs[at-1].size <= 2*acc {
		at--
		acc += segs[at].size
	}
	keep = max(keep, 1)
	if at+1 <= keep {
		return at, len(segs)
	}
	// The window of w adjacent segments with the fewest bytes.
	w := len(segs) - keep + 1
	var sum, best int64
	for i := range segs {
		sum += segs[i].size
		if i >= w {
			sum -= segs[i-w].size
		}
		if i >= w-1 && (i == w-1 || sum < best) {
			best, lo = sum, i-w+1
		}
	}
	// A window that is mostly one large segment would rewrite it for a
	// few small ones (a first build's gigabyte, seconds of a search):
	// the newest run is merged instead, when it is two or more, and the
	// index keeps more than keep segments for a while.
	var largest int64
	for _, s := range segs[lo : lo+w] {
		largest = max(largest, s.size)
	}
	if largest > dominant*(best-largest) && len(segs)-at >= 2 {
		return at, len(segs)
	}
	return lo, lo + w
}

// dominant is how many times the rest of a window its largest segment
// may hold before mergeRun leaves the window alone.
const dominant = 4

// merge merges the run of the current segments that pick returns.
func (ix *Index) merge(ctx context.Context, pick func([]*segment) []*segment) error {
	ix.mergeMu.Lock()
	defer ix.mergeMu.Unlock()
	all, err := ix.snapshot()
	if err != nil {
		return err
	}
	defer releaseAll(all)
	if len(all) < 2 {
		return nil
	}
	segs := pick(all)
	if len(segs) < 2 {
		return nil
	}
	name := ix.allocName()
	si, err := mergeSegments(ctx, ix.fsys, filepath.Join(ix.dir, name), segs)
	if err != nil {
		return err
	}
	si.name = name
	if err := ix.commit([]segInfo{si}, segs); err != nil {
		_ = ix.fsys.Remove(filepath.Join(ix.dir, name))
		return err
	}
	return nil
}

// mergeSpillMem is the most of a merged segment's dictionary held in
// memory: more goes to a temporary file (a merge of a first build's
// segments writes some 100 MB of it, and held in memory its buffer's
// growth was the merge's peak).
const mergeSpillMem = 1 << 20

type mergeInput struct {
	s    *segment
	base int32 // ordinal of its first document in the output
	dict *dictCursor
	post *pageReader
	tool []uint32 // its tool numbers in the output
	i    int
}

type cursorHeap []*mergeInput

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].dict.term, h[j].dict.term); c != 0 {
		return c < 0
	}
	return h[i].i > h[j].i // the newest segment first
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*mergeInput)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeSegments writes the documents and terms of segs (oldest first,
// with ascending ids) as one segment at path.
func mergeSegments(ctx context.Context, fsys vfs.FS, path string, segs []*segment) (segInfo, error) {
	w, err := createSegment(fsys, path)
	if err != nil {
		return segInfo{}, err
	}
	fail := func(err error) (segInfo, error) {
		w.abort()
		return segInfo{}, fmt.Errorf("merge into segment %s: %w", path, err)
	}
	var tools []string
	toolNum := map[string]uint32{}
	in := make([]*mergeInput, len(segs))
	var ndocs int64
	for i, s := range segs {
		// A merge of many segments holds a reader of each: they keep one
		// page each (they read on), not a query's four.
		mi := &mergeInput{s: s, base: int32(ndocs), i: i, post: s.reader().sequential()}
		mi.dict = s.cursor(s.reader().sequential(), 0)
		for _, t := range s.tools {
			n, ok := toolNum[t]
			if !ok {
				n = uint32(len(tools))
				toolNum[t] = n
				tools = append(tools, t)
			}
			mi.tool = append(mi.tool, n)
		}
		ndocs += s.foot.ndocs
		if ndocs >= 1<<31 {
			return fail(fmt.Errorf("%d documents are more than a segment holds", ndocs))
		}
		in[i] = mi
	}
	// Documents, oldest segment first.
	start := w.beginRegion()
	rec := make([]byte, 0, pageSize)
	for _, mi := range in {
		pr := mi.s.reader().sequential()
		r := mi.s.foot.docs
		const chunk = docRecSize * 1024
		for off := int64(0); off < r.len; off += chunk {
			b, err := pr.read(r.off+off, min(chunk, r.len-off))
			if err != nil {
				return fail(err)
			}
			for ; len(b) > 0; b = b[docRecSize:] {
				d := decodeDocRecord(b)
				if int(d.tool) >= len(mi.tool) {
					return fail(corruptf("%s: a document names tool %d of %d", mi.s.path, d.tool, len(mi.tool)))
				}
				d.tool = mi.tool[d.tool]
				rec = appendDocRecord(rec[:0], &d)
				if _, err := w.pw.Write(rec); err != nil {
					return fail(err)
				}
			}
		}
		pr.put()
	}
	w.foot.docs = w.endRegion(start)
	w.foot.ndocs = ndocs
	w.foot.minID, w.foot.maxID = segs[0].foot.minID, segs[len(segs)-1].foot.maxID
	// Postings: terms in order; for each, the inputs' postings from the
	// newest segment down, their ordinals moved up by the segment's base.
	start = w.beginRegion()
	pw := &postingsWriter{w: w.pw}
	dw := &dictWriter{out: &spill{fsys: fsys, path: vfs.TempName(path + ".dict"), limit: mergeSpillMem}}
	defer dw.out.close()
	var h cursorHeap
	for _, mi := range in {
		if mi.dict.next() {
			h = append(h, mi)
		} else if mi.dict.err != nil {
			return fail(mi.dict.err)
		}
	}
	heap.Init(&h)
	// One postings iterator (and its buffers) serves every input: each
	// term's postings are read one input after another. Full blocks are
	// copied as they are; the rest are decoded and written again.
	var iter termIter
	var term []byte
	var nterms int64
	// The inputs' postings readers read one after another, so one
	// buffer for their reads of several pages is lent to each in turn
	// (a merge of many segments would else hold one of each).
	var lent []byte
	for n := 0; len(h) > 0; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
		}
		term = append(term[:0], h[0].dict.term...)
		for len(h) > 0 && bytes.Equal(h[0].dict.term, term) {
			mi := h[0]
			mi.post.buf = lent
			if err := copyPostings(pw, &iter, mi); err != nil {
				return fail(err)
			}
			lent, mi.post.buf = mi.post.buf, nil
			if cap(lent) > 1<<20 {
				lent = nil // a long list's buffer is not kept
			}
			if mi.dict.next() {
				heap.Fix(&h, 0)
			} else {
				if mi.dict.err != nil {
					return fail(mi.dict.err)
				}
				heap.Pop(&h)
			}
		}
		ti, err := pw.end()
		if err != nil {
			return fail(err)
		}
		if err := dw.add(term, ti); err != nil {
			return fail(err)
		}
		nterms++
	}
	w.foot.post = w.endRegion(start)
	w.foot.nterms = nterms
	if err := w.finishDict(dw); err != nil {
		return fail(err)
	}
	start = w.beginRegion()
	if _, err := w.pw.Write(encodeTools(tools)); err != nil {
		return fail(err)
	}
	w.foot.tools = w.endRegion(start)
	size, sum, err := w.finish()
	if err != nil {
		return segInfo{}, err
	}
	return segInfo{size: size, sum: sum, docs: w.foot.ndocs, minID: w.foot.minID, maxID: w.foot.maxID}, nil
}

// copyPostings adds the postings of the input's current term to pw:
// each full block as it is (its documents' differences do not change),
// the documents of the others one by one.
func copyPostings(pw *postingsWriter, it *termIter, mi *mergeInput) error {
	if err := it.blocks(mi.s, mi.post, mi.dict.ti); err != nil {
		return err
	}
	for b := range it.bdocs {
		if it.bdocs[b] == postingBlock {
			first, bits, err := it.rawBlock(b)
			if err != nil {
				return err
			}
			if err := pw.addRaw(mi.base+first, bits); err != nil {
				return err
			}
			continue
		}
		if err := it.load(b); err != nil {
			return err
		}
		for i, ord := range it.ords {
			it.i = i
			pos, err := it.positions()
			if err != nil {
				return err
			}
			if err := pw.add(mi.base+ord, pos); err != nil {
				return err
			}
		}
	}
	return nil
}
