package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// The segments a push writes.
const (
	// defaultSegmentSize bounds a segment's plain bytes (a longer line is
	// a segment of its own): the unit of memory of a transfer.
	defaultSegmentSize = 16 << 20
	// defaultInlineMax bounds the lines a manifest carries itself.
	defaultInlineMax = 64 << 10
)

func (o *Options) segmentSize() int {
	if o.SegmentSize > 0 {
		return o.SegmentSize
	}
	return defaultSegmentSize
}

func (o *Options) inlineMax() int {
	switch {
	case o.InlineMax < 0:
		return 0
	case o.InlineMax == 0:
		return defaultInlineMax
	}
	return o.InlineMax
}

// localLines reads the complete lines of a session file from off to end,
// streamed: fn gets each line without its newline and where it starts.
func localLines(f io.ReaderAt, off, end int64, fn func(off int64, line []byte) error) error {
	lr := newLineReader(io.NewSectionReader(f, off, end-off))
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(off, line); err != nil {
			return err
		}
		off += int64(len(line)) + 1
	}
}

// completeEnd returns where the last complete line of f (size bytes) that
// starts at or after off ends: the bytes after the last '\n' are a line
// another writer is still writing, left for later.
func completeEnd(f io.ReaderAt, off, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > off; {
		start := max(off, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return off, nil
}

// readRemoteIDs reads the ids of the remote lines that may be among the
// local lines after st.P: the entry lines of segments from st.F (from 0
// when the file is compared from its start), and st.Known.
func (r *Remote) readRemoteIDs(ctx context.Context, man *Manifest, st *sessionState) (*remoteIDs, error) {
	rid := &remoteIDs{ids: map[string]struct{}{}}
	for _, id := range st.Known {
		rid.ids[id] = struct{}{}
	}
	if man == nil {
		return rid, nil
	}
	from := st.F
	if st.P == 0 {
		from = 0
	}
	for i := from; i < len(man.Segments); i++ {
		var ids []string
		var hdr []byte
		err := r.scanSegment(ctx, man.Segments[i], i == 0, func(k lineKind, line []byte, e *jsonl.Entry, _ int, _ string) {
			switch k {
			case lineEntry:
				ids = append(ids, e.ID)
			case lineHeader:
				hdr = bytes.Clone(line)
			}
		})
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rid.header, rid.haveHeader = headerID(hdr), true
		}
		for _, id := range ids {
			rid.ids[id] = struct{}{}
		}
	}
	return rid, nil
}

// pushPi uploads the local lines after st.P that the remote lacks (rid:
// the ids of the remote lines that may be among them; nil: read them
// here), as the next manifest generation: an inline segment when they
// are few, else data objects of at most SegmentSize bytes each, after
// which the segments are compacted. It reads the local file twice,
// streamed, and holds at most a segment. It returns the lines pushed and
// the new manifest (nil when nothing was pushed), and moves st.
//
// Its steps are the methods of piPush, in order: checkSession,
// scanLines, holdMarkers and readEarly (the first pass: which lines go
// up), startSegments and upload (the second pass), finishSegments,
// completeManifest and publish.
func (r *Remote) pushPi(ctx context.Context, name, path string, man *Manifest, nextGen int64, st *sessionState, rid *remoteIDs) (int, *Manifest, error) {
	f, err := r.opts.fs().OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	if fi.Size() < st.P {
		return 0, nil, fmt.Errorf("read %s: the file shrank below %d bytes", path, st.P)
	}
	end, err := completeEnd(f, st.P, fi.Size())
	if err != nil {
		return 0, nil, fmt.Errorf("read %s: %w", path, err)
	}
	p := &piPush{r: r, ctx: ctx, name: name, path: path, man: man, st: st, f: f, fi: fi, end: end, rid: rid}
	if err := p.checkSession(); err != nil {
		return 0, nil, err
	}
	if err := p.scanLines(); err != nil {
		return 0, nil, err
	}
	p.holdMarkers()
	if err := p.readEarly(); err != nil {
		return 0, nil, err
	}
	newP := end
	if man == nil && !p.header {
		return 0, nil, fmt.Errorf("push %s: the file does not start with a session header", path)
	}

	// Second pass: the lines, into an inline segment or data objects.
	nm := &Manifest{Format: FormatVersion, Kind: KindPi, Name: name, Gen: nextGen, Host: r.opts.Host,
		Time: r.opts.now().UTC().Format(time.RFC3339), Encrypted: len(r.opts.Recipients) > 0}
	w := p.startSegments()
	defer w.abandon()
	n, err := p.upload()
	if err != nil {
		return 0, nil, err
	}
	if w.empty() {
		st.P = newP
		st.PTail, _ = r.tailSum(path, st.P)
		st.Known = nil
		if man != nil {
			st.F = len(man.Segments)
		}
		p.seen(st)
		return 0, nil, nil
	}
	if err := p.finishSegments(nm); err != nil {
		return 0, nil, err
	}
	q, whole := p.completeManifest(nm)
	if err := p.publish(nm, newP, q, whole); err != nil {
		return 0, nil, err
	}
	return n, nm, nil
}

// pushMarker is a sync marker line a push may hold back: the entry it
// hangs below, and where it is in the local file.
type pushMarker struct {
	parent string
	off    int64
	n      int
}

// piPush is one push of a pi session file: what the steps of pushPi
// pass on to the next.
type piPush struct {
	r          *Remote
	ctx        context.Context
	name, path string
	man        *Manifest
	st         *sessionState
	f          vfs.File
	fi         fs.FileInfo
	end        int64 // where the last complete line ends
	rid        *remoteIDs

	// The first pass.
	markers  map[string]pushMarker
	order    []string // the markers in file order
	needed   map[string]bool
	header   bool // the header goes up
	upBytes  int64
	keepHeld []heldMarker
	early    [][]byte // the held markers from before P that go up now

	// The second pass.
	w           *segBuilder
	base        []Segment
	kept        int // how many of man's segments the new manifest keeps as they are
	inlineMode  bool
	sum         *Summary
	incremental bool
}

// checkSession checks a file compared from its start: its header must be
// the session the name says, and the remote copy's the same. It reads
// the remote ids first when pushPi was not given them.
func (p *piPush) checkSession() error {
	st, name := p.st, p.name
	localID := ""
	if st.P == 0 && p.end > 0 {
		first := true
		_ = localLines(p.f, 0, p.end, func(_ int64, line []byte) error {
			if first {
				localID = headerID(line)
				first = false
			}
			return io.EOF
		})
		if localID != "" {
			if id, ok := nameID(name); ok && id != localID {
				return fmt.Errorf("push %s: the header has session id %q, the file name %q: %w", p.path, localID, id, ErrSessionMismatch)
			}
		}
	}
	if p.rid == nil {
		rid, err := p.r.readRemoteIDs(p.ctx, p.man, st)
		if err != nil {
			return err
		}
		p.rid = rid
	}
	if localID != "" && p.rid.haveHeader {
		if err := sameSession("push", name, p.rid.header, localID); err != nil {
			return err
		}
	}
	return nil
}

// scanLines is the first pass: which lines go up. Markers go up only
// when something pushed hangs below them; those held back before P
// (st.Held) are candidates like the ones after it.
func (p *piPush) scanLines() error {
	st, rid, man := p.st, p.rid, p.man
	markers := map[string]pushMarker{}
	var order []string // the markers in file order
	for _, h := range st.Held {
		if _, ok := rid.ids[h.ID]; ok || h.Off+int64(h.Len) >= st.P {
			continue // another machine uploaded the same marker, or not ours
		}
		markers[h.ID] = pushMarker{parent: h.Parent, off: h.Off, n: h.Len}
		order = append(order, h.ID)
	}
	needed := map[string]bool{}
	header := false
	var upBytes int64
	err := localLines(p.f, st.P, p.end, func(off int64, line []byte) error {
		e, err := jsonl.ParseEntry(line)
		if err != nil {
			return nil // not an object: readers skip it too
		}
		if e.IsHeader() {
			if off == 0 && man == nil {
				header = true
				upBytes += int64(len(line)) + 1
			}
			return nil
		}
		if e.IDKind != jsonl.KindString {
			return nil
		}
		if _, ok := rid.ids[e.ID]; ok {
			return nil // the same entry, or a conflict a pull keeps both sides of
		}
		parent := ""
		if e.ParentKind == jsonl.KindString {
			parent = e.ParentID
		}
		if isMarker(&e) {
			markers[e.ID] = pushMarker{parent: parent, off: off, n: len(line)}
			order = append(order, e.ID)
		} else if _, ok := markers[parent]; ok {
			needed[parent] = true
		}
		upBytes += int64(len(line)) + 1
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", p.path, err)
	}
	p.markers, p.order, p.needed, p.header, p.upBytes = markers, order, needed, header, upBytes
	return nil
}

// held marks as needed the markers a needed marker hangs below, and
// returns the markers held back.
func (p *piPush) held() []heldMarker {
	markers, order, needed := p.markers, p.order, p.needed
	for i := len(order) - 1; i >= 0; i-- {
		if mk := markers[order[i]]; needed[order[i]] {
			if _, ok := markers[mk.parent]; ok {
				needed[mk.parent] = true
			}
		}
	}
	var out []heldMarker
	for _, id := range order {
		if mk := markers[id]; !needed[id] {
			out = append(out, heldMarker{ID: id, Parent: mk.parent, Off: mk.off, Len: mk.n})
		}
	}
	return out
}

// holdMarkers settles the markers held back: a needed marker needs the
// marker it hangs below; past maxHeld the oldest go up too.
func (p *piPush) holdMarkers() {
	keepHeld := p.held()
	if over := len(keepHeld) - maxHeld; over > 0 {
		for _, h := range keepHeld[:over] {
			p.needed[h.ID] = true
		}
		keepHeld = p.held()
	}
	p.keepHeld = keepHeld
}

// readEarly reads the held markers that go up now, from before P, in
// file order, checking each is still where it was.
func (p *piPush) readEarly() error {
	var early [][]byte
	for _, id := range p.order {
		mk := p.markers[id]
		if !p.needed[id] || mk.off >= p.st.P {
			continue
		}
		line := make([]byte, mk.n)
		if _, err := p.f.ReadAt(line, mk.off); err != nil {
			return fmt.Errorf("read %s: %w", p.path, err)
		}
		if e, err := jsonl.ParseEntry(line); err != nil || e.ID != id || !isMarker(&e) {
			return fmt.Errorf("read %s: the sync marker %s is no longer at offset %d: %w", p.path, id, mk.off, errRewritten)
		}
		early = append(early, line)
		p.upBytes += int64(mk.n) + 1
	}
	p.early = early
	return nil
}

// keep reports whether the second pass uploads entry e.
func (p *piPush) keep(e *jsonl.Entry) bool {
	if _, ok := p.rid.ids[e.ID]; ok {
		return false
	}
	if _, ok := p.markers[e.ID]; ok {
		return p.needed[e.ID]
	}
	return true
}

// startSegments sets up the second pass: the segments of man the new
// manifest keeps, and the builder the lines go into, in inline mode when
// they fit in InlineMax with man's last inline segments (which otherwise
// move into the data objects with the new lines).
func (p *piPush) startSegments() *segBuilder {
	r, man, upBytes := p.r, p.man, p.upBytes
	var base []Segment
	kept := 0 // how many of man's segments the new manifest keeps as they are
	var inlineBytes int64
	nInline := 0
	if man != nil {
		base = append(base, man.Segments...)
		kept = len(base)
		for i := len(base) - 1; i >= 0 && base[i].inline(); i-- {
			inlineBytes += base[i].Plain
			nInline++
		}
	}
	inl := int64(r.opts.inlineMax())
	inlineMode := upBytes > 0 && inl > 0 && inlineBytes+upBytes <= inl
	w := &segBuilder{b: r.b, max: r.opts.segmentSize()}
	if inlineMode {
		w.max = int(inl) + 1
	} else if upBytes > 0 && nInline > 0 {
		// The inline segments move into data objects with the new lines.
		for _, s := range base[len(base)-nInline:] {
			w.buf = append(w.buf, s.Data...)
		}
		base = base[:len(base)-nInline]
		kept = len(base)
	}
	p.w, p.base, p.kept, p.inlineMode = w, base, kept, inlineMode
	return w
}

// up adds one line to the upload.
func (p *piPush) up(line []byte) error {
	if p.r.opts.Transform != nil {
		t, err := p.r.opts.Transform(bytes.Clone(line))
		if err != nil {
			return fmt.Errorf("push %s: transform: %w", p.path, err)
		}
		line = t
	}
	if p.incremental {
		p.sum.add(line)
	}
	return p.w.add(p.ctx, line)
}

// upload is the second pass: the early markers, then the lines after P
// that go up, into the builder and the summary. It returns how many
// entry lines it added.
func (p *piPush) upload() (int, error) {
	man := p.man
	p.sum, p.incremental = p.r.summaryBase(man, p.f, p.end)
	n := 0
	for _, line := range p.early {
		n++
		if err := p.up(line); err != nil {
			return 0, err
		}
	}
	if p.upBytes > 0 {
		err := localLines(p.f, p.st.P, p.end, func(off int64, line []byte) error {
			e, err := jsonl.ParseEntry(line)
			if err != nil {
				return nil
			}
			switch {
			case e.IsHeader():
				if off != 0 || man != nil {
					return nil
				}
			case e.IDKind != jsonl.KindString || !p.keep(&e):
				return nil
			default:
				n++
			}
			return p.up(line)
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// seen records in st what the push saw: the file as its Stat found it,
// every complete line of which is now on the remote (or held back), never
// what pi appended since.
func (p *piPush) seen(st *sessionState) {
	st.Path, st.Size, st.Mtime = p.path, p.fi.Size(), p.fi.ModTime().UnixNano()
	st.Held = p.keepHeld
}

// finishSegments ends the upload: the lines are an inline segment, or
// the last data object is flushed; nm gets the segments.
func (p *piPush) finishSegments(nm *Manifest) error {
	w, base := p.w, p.base
	if p.inlineMode && len(w.segs) == 0 && w.up == nil {
		base = append(base, inlineSegment(w.buf))
	} else {
		// (In inline mode too when a transform made the lines outgrow
		// the inline bound and a segment was uploaded.)
		if err := w.flush(p.ctx); err != nil {
			return err
		}
		base = append(base, w.segs...)
	}
	nm.Segments = base
	return nil
}

// completeManifest fills in the rest of nm: the objects retired, after
// a compaction of the segments when every remote segment is local, its
// size and summary. It returns Q of man moved over the segments found
// local, and whether every remote segment is local.
func (p *piPush) completeManifest(nm *Manifest) (q int, whole bool) {
	r, man, f, end := p.r, p.man, p.f, p.end
	now := r.opts.now().UTC()
	if man != nil {
		for _, x := range man.Retired {
			if t, err := time.Parse(time.RFC3339, x.Time); err == nil && now.Sub(t) < retireKeep {
				nm.Retired = append(nm.Retired, x)
			}
		}
	}
	// Compaction needs every remote segment in the local file: the runs
	// it merges are those this machine knows. The record may lag behind
	// the remote (a push killed after it published its manifest, before
	// it recorded so): the segments after Q that the file holds at the
	// same place, by checksum, are its own.
	// (q is Q of man: st is left as it is until the push is published,
	// so that a push that fails records nothing of the manifest it
	// built on.)
	q = p.st.Q
	if man != nil && q < len(man.Segments) {
		var off int64
		for _, s := range man.Segments[:q] {
			off += s.Plain
		}
		_, q = alignFrom(f, end, man, q, off)
	}
	whole = man == nil || q >= len(man.Segments) // every remote segment is local
	if whole {
		retired := r.compact(p.ctx, nm, f, end)
		for _, o := range retired {
			nm.Retired = append(nm.Retired, Retired{Object: o, Time: now.Format(time.RFC3339)})
		}
	}
	nm.Retired = dropNamed(nm.Retired, nm.Segments)
	for _, s := range nm.Segments {
		nm.Size += s.Plain
		nm.Lines += s.Lines
	}
	nm.Summary = p.sum
	return q, whole
}

// publish publishes nm and moves st to what the push leaves: P at newP,
// F and Q past the new segments (Q of man at q, all when whole). When
// the manifest may have arrived despite an error, st keeps that state as
// pending, for the next run to check.
func (p *piPush) publish(nm *Manifest, newP int64, q int, whole bool) error {
	r, st := p.r, p.st
	next := *st
	next.Pending = nil
	next.P = newP
	next.PTail, _ = r.tailSum(p.path, next.P)
	next.F = len(nm.Segments)
	next.Known = nil
	p.seen(&next)
	// The inline segments that moved into the new data objects are no
	// longer segments of their own: those of them q counted now lie in a
	// segment that also holds lines this file may lack.
	next.Q = min(q, p.kept)
	if whole {
		next.Q = len(nm.Segments) // the new segments' lines are local ones
	}
	if sent, err := r.b.publish(p.ctx, nm); err != nil {
		if sent != nil && !errors.Is(err, errRace) {
			// The manifest may have arrived: remember what this push
			// would have left, for the next run to check (settle).
			pn := next
			pn.noteRemote(nm)
			pn.Pushed = true
			st.pending(sent, pn)
		}
		return err
	}
	*st = next
	return nil
}

// errRewritten is a local file that no longer holds what the record
// says it held before P: it is compared from its start again.
var errRewritten = errors.New("the file was rewritten")

// dropNamed leaves out of rs the objects segs name.
func dropNamed(rs []Retired, segs []Segment) []Retired {
	if len(rs) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, s := range segs {
		if !s.inline() {
			named[s.Object] = true
		}
	}
	out := rs[:0]
	seen := map[string]bool{}
	for _, x := range rs {
		if !named[x.Object] && !seen[x.Object] {
			seen[x.Object] = true
			out = append(out, x)
		}
	}
	return out
}

// healPi replaces a remote copy that holds an unreadable segment: the new
// generation's segments are the local file's lines and the lines of the
// readable remote segments the local file lacks. Lines only the bad
// segment held come back from the machines that have them: their state
// no longer matches the remote, so their next push compares in full.
// Both are streamed, a segment at a time.
func (r *Remote) healPi(ctx context.Context, name, path string, man *Manifest, nextGen int64, st *sessionState) (int, *Manifest, error) {
	f, err := r.opts.fs().OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	end, err := completeEnd(f, 0, fi.Size())
	if err != nil {
		return 0, nil, fmt.Errorf("read %s: %w", path, err)
	}
	have := map[string]bool{}
	w := &segBuilder{b: r.b, max: r.opts.segmentSize()}
	defer w.abandon()
	sum := &Summary{}
	n := 0
	localHdr := ""
	err = localLines(f, 0, end, func(_ int64, l []byte) error {
		e, err := jsonl.ParseEntry(l)
		if err != nil || (!e.IsHeader() && e.IDKind != jsonl.KindString) {
			return nil
		}
		if e.IsHeader() {
			if localHdr != "" {
				return nil
			}
			localHdr = e.ID
		} else {
			have[e.ID] = true
			n++
		}
		if r.opts.Transform != nil {
			if l, err = r.opts.Transform(bytes.Clone(l)); err != nil {
				return fmt.Errorf("push %s: transform: %w", path, err)
			}
		}
		sum.add(l)
		return w.add(ctx, l)
	})
	if err != nil {
		return 0, nil, err
	}
	if err := w.flush(ctx); err != nil {
		return 0, nil, err
	}
	nLocal := len(w.segs)
	for i, s := range man.Segments {
		var add [][]byte
		var hdr []byte
		err := r.scanSegment(ctx, s, i == 0, func(k lineKind, line []byte, e *jsonl.Entry, _ int, _ string) {
			switch k {
			case lineHeader:
				hdr = bytes.Clone(line)
			case lineEntry:
				if !have[e.ID] {
					add = append(add, bytes.Clone(line))
				}
			}
		})
		if err != nil {
			continue // unreadable: what only it held comes back from elsewhere
		}
		if i == 0 && hdr != nil {
			// Never rebuild another session's copy from this file.
			if err := sameSession("push", name, headerID(hdr), localHdr); err != nil {
				return 0, nil, err
			}
		}
		for _, l := range add {
			e, _ := jsonl.ParseEntry(l)
			if have[e.ID] {
				continue
			}
			have[e.ID] = true
			sum.add(l)
			if err := w.add(ctx, l); err != nil {
				return 0, nil, err
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return 0, nil, err
	}
	nm := &Manifest{Format: FormatVersion, Kind: KindPi, Name: name, Gen: nextGen, Host: r.opts.Host,
		Time: r.opts.now().UTC().Format(time.RFC3339), Encrypted: len(r.opts.Recipients) > 0, Segments: w.segs, Summary: sum}
	for _, s := range nm.Segments {
		nm.Size += s.Plain
		nm.Lines += s.Lines
	}
	if err := r.b.putManifest(ctx, nm); err != nil {
		return 0, nil, err
	}
	*st = sessionState{Path: path, P: end, F: len(nm.Segments), Q: nLocal, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	st.PTail, _ = r.tailSum(path, st.P)
	return n, nm, nil
}
