package replica

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// tailLen is how many bytes before P the state's checksum covers.
const tailLen = 4096

// piSession brings one JSONL session's two sides together as m asks.
// It returns the state to remember (nil: forget the session).
//
// The remote segments are read once, streamed, each at most once per
// run: those the local file may lack (from st.Q) for the pull, those that
// may hold a local line after st.P (from st.F) for the push's comparison
// by entry id; what a pull merged is remembered (Known), so that the next
// push does not read it again.
//
// Its steps are the methods of piReconcile, in order: readManifest,
// plan, restoreMissing, readSegments, pull, push and finish.
func (r *Remote) piSession(ctx context.Context, m mode, name string, loc *local, h *head, old *sessionState) (rep SessionReport, st *sessionState, err error) {
	s := &piReconcile{r: r, ctx: ctx, m: m, name: name, loc: loc, h: h, old: old}
	s.rep = SessionReport{Kind: KindPi, Name: name}
	if err := s.readManifest(); err != nil {
		return s.rep, old, err
	}
	s.plan()
	if done, err := s.restoreMissing(); done {
		return s.rep, s.st, err
	}
	if err := s.readSegments(); err != nil {
		return s.rep, s.st, err
	}
	if err := s.pull(); err != nil {
		return s.rep, s.st, err
	}
	if err := s.push(); err != nil {
		return s.rep, s.st, err
	}
	return s.finish()
}

// piReconcile is one run of piSession: what its steps pass on to the
// next.
type piReconcile struct {
	r    *Remote
	ctx  context.Context
	m    mode
	name string
	loc  *local // nil until restoreMissing finds the file written meanwhile
	h    *head  // nil once readManifest republished a torn generation
	old  *sessionState

	rep     SessionReport
	st      *sessionState
	man     *Manifest
	nextGen int64

	// What plan decided.
	pushedBefore       bool
	n                  int // the remote segments
	wantPull, wantPush bool

	// What readSegments read.
	rid     *remoteIDs
	lines   [][]byte      // remote entry lines from Q, for the merge
	pos     []RefusedLine // where each of lines stands
	lineSeg []int         // the segment each of lines is in
	hdr     []byte        // the remote header, when segment 0 is merged
	refused []RefusedLine
	merged  []string // ids of the remote lines from Q
	corrupt error    // the first torn or foreign segment

	grown  int64 // what the merge appended
	pushed bool  // a push recorded the file as it read it (st.Size)
}

// readManifest reads the remote manifest h names. A torn or foreign one
// falls back to an older valid generation, which a push or sync
// publishes above the torn one at once.
func (s *piReconcile) readManifest() error {
	r, ctx, m, h := s.r, s.ctx, s.m, s.h
	s.nextGen = int64(1)
	if h != nil {
		s.nextGen = h.gen + 1
		man, err := r.b.getManifest(ctx, h)
		s.man = man
		if err != nil {
			if !errors.Is(err, ErrCorruptRemote) || (errors.Is(err, errManifestTooLarge) && (m == modePush || m == modeSync)) {
				// (One too large to read is read past, never replaced by a
				// push: it may be whole, an older sessctl's.)
				return err
			}
			// A torn or foreign manifest: fall back to an older valid
			// generation; the next push publishes above it.
			s.man = r.olderManifest(ctx, h)
			if s.man == nil && s.loc == nil {
				return err
			}
			if s.man != nil && (m == modePush || m == modeSync) {
				// Publish the readable generation above the torn one, and
				// drop the torn one with the other older generations.
				nm := *s.man
				nm.Gen, nm.Host, nm.Time = s.nextGen, r.opts.Host, r.opts.now().UTC().Format(time.RFC3339)
				if err := r.b.putManifest(ctx, &nm); err != nil {
					return err
				}
				for _, k := range append([]string{h.key}, h.older...) {
					_ = r.b.remove(ctx, k)
				}
				s.man, s.nextGen = &nm, s.nextGen+1
				s.h = nil
			}
		}
	}
	return nil
}

// plan takes the state that still holds and decides which sides move.
func (s *piReconcile) plan() {
	m, loc, old, man := s.m, s.loc, s.old, s.man
	localSame := old != nil && loc != nil && old.Path == loc.path && old.Size == loc.size && old.Mtime == loc.mtime
	st := s.r.validState(old, loc, man)
	s.pushedBefore = st.Pushed && localSame
	st.Pushed = false
	n := 0
	if man != nil {
		n = len(man.Segments)
	}
	s.st, s.n = st, n
	s.wantPull = (m == modePull || m == modeSync) && man != nil && (loc == nil || st.Q < n)
	s.wantPush = (m == modePush || m == modeSync) && loc != nil
}

// restoreMissing is the pull into a store that lacks the session: it
// restores it, streamed. It reports done when piSession ends there (with
// err); a file written meanwhile (another sync) is merged into instead.
func (s *piReconcile) restoreMissing() (done bool, err error) {
	if !s.wantPull || s.loc != nil {
		return false, nil
	}
	r, man, n := s.r, s.man, s.n
	rep := &s.rep
	path, nl, size, refused, err := r.restore(s.ctx, s.name, man)
	switch {
	case errors.Is(err, errRestoreExists):
		// Written meanwhile (another sync): merge into it.
		fi, lerr := r.opts.fs().Lstat(path)
		if lerr != nil {
			return true, err
		}
		s.loc = &local{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		s.st = &sessionState{Path: path}
		return false, nil
	case err != nil:
		return true, err
	default:
		fi, err := r.opts.fs().Lstat(path)
		if err != nil {
			return true, err
		}
		rep.Created, rep.Pulled, rep.Refused, rep.Path = true, nl, refused, path
		// What pi appended since the restore is not on the remote.
		st := &sessionState{Path: path, P: size, F: n, Q: n, Pushed: fi.Size() == size, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
		st.PTail, _ = r.tailSum(path, st.P)
		st.noteRemote(man)
		s.st = st
		rep.State = "pulled"
		return true, nil
	}
}

// readSegments reads the remote segments, each once: for the merge the
// segments from Q, for the push's comparison those from F (all of them
// when the local file is compared from its start), for Verify every one.
// A torn or foreign segment fails it unless a push heals it.
func (s *piReconcile) readSegments() error {
	r, ctx, name, man, st, n := s.r, s.ctx, s.name, s.man, s.st, s.n
	wantPull, wantPush := s.wantPull, s.wantPush
	from := n
	if wantPull {
		from = st.Q
	}
	pushFrom := n
	if wantPush && man != nil {
		pushFrom = st.F
		if st.P == 0 {
			pushFrom = 0
		}
		from = min(from, pushFrom)
	}
	if r.opts.Verify && man != nil {
		from = 0
	}
	rid := &remoteIDs{ids: map[string]struct{}{}}
	s.rid = rid
	var lines [][]byte    // remote entry lines from Q, for the merge
	var pos []RefusedLine // where each of lines stands
	var lineSeg []int     // the segment each of lines is in
	var hdr []byte        // the remote header, when segment 0 is merged
	var refused []RefusedLine
	var merged []string // ids of the remote lines from Q
	var corrupt error   // the first torn or foreign segment
	for i := from; i < n; i++ {
		forMerge, forPush := wantPull && i >= st.Q, wantPush && i >= pushFrom
		var segLines [][]byte
		var segPos []RefusedLine // where each of segLines stands
		var segIDs []string
		var segRefused []RefusedLine
		var segHdr []byte
		err := r.scanSegment(ctx, man.Segments[i], i == 0, func(k lineKind, line []byte, e *jsonl.Entry, ln int, why string) {
			switch k {
			case lineRefused:
				if forMerge {
					segRefused = append(segRefused, RefusedLine{Object: man.Segments[i].Object, Line: ln, Reason: why})
				}
			case lineHeader:
				segHdr = bytes.Clone(line)
			case lineEntry:
				segIDs = append(segIDs, e.ID)
				if forMerge {
					segLines = append(segLines, bytes.Clone(line))
					segPos = append(segPos, RefusedLine{Object: man.Segments[i].Object, Line: ln})
				}
			}
		})
		if err != nil {
			if !errors.Is(err, ErrCorruptRemote) {
				return err
			}
			if corrupt == nil {
				corrupt = err
			}
			continue
		}
		if i == 0 {
			if segHdr == nil && (forMerge || forPush) {
				return fmt.Errorf("read %s: the remote copy does not start with a complete session header line: %w", name, ErrCorruptRemote)
			}
			rid.header, rid.haveHeader = headerID(segHdr), true
			if forMerge {
				hdr = segHdr
			}
		}
		if forPush {
			for _, id := range segIDs {
				rid.ids[id] = struct{}{}
			}
		}
		if forMerge {
			lines = append(lines, segLines...)
			pos = append(pos, segPos...)
			for range segLines {
				lineSeg = append(lineSeg, i)
			}
			refused = append(refused, segRefused...)
			merged = append(merged, segIDs...)
		}
	}
	s.lines, s.pos, s.lineSeg, s.hdr, s.refused, s.merged, s.corrupt = lines, pos, lineSeg, hdr, refused, merged, corrupt
	if corrupt != nil && (s.loc == nil || s.m == modePull || s.m == modeStatus) {
		if r.opts.Verify {
			return fmt.Errorf("verify %s: %w", name, corrupt)
		}
		return corrupt
	}
	return nil
}

// pull merges the remote lines the local file lacks, and moves Q (and F
// and Known, for the next push) over them.
func (s *piReconcile) pull() error {
	if !s.wantPull || s.corrupt != nil {
		return nil
	}
	st, rid, merged, n := s.st, s.rid, s.merged, s.n
	rep := &s.rep
	res, err := s.r.merge(s.ctx, s.name, s.loc.path, s.hdr, s.lines, s.pos)
	if err != nil {
		return err
	}
	rep.Pulled, rep.Conflicts, rep.Refused = res.appended, res.conflicts, append(s.refused, res.refused...)
	s.grown = res.bytes
	for _, id := range merged {
		rid.ids[id] = struct{}{} // on the remote: never pushed back
	}
	if res.appended > 0 {
		// The lines merged are at the end of the file, after P: the
		// next push compares by their ids instead of reading the
		// segments again, unless there are too many to remember.
		if st.F >= st.Q && len(st.Known)+len(merged) <= maxKnown {
			st.Known = append(st.Known, merged...)
			st.F = n
		} else {
			st.F, st.Known = min(st.F, st.Q), nil
		}
	}
	st.Q = n
	if res.orphan >= 0 {
		// A line whose parent has not arrived yet (another machine's
		// push still on its way, or a copy that lacks it) is merged by
		// a later pull: its segment is not counted as local.
		st.Q = s.lineSeg[res.orphan]
	}
	st.noteRemote(s.man)
	return nil
}

// push uploads the local lines the remote lacks, healing the remote
// copy first when one of its segments is torn or foreign.
func (s *piReconcile) push() error {
	if !s.wantPush {
		s.st.Pushed = s.pushedBefore
		return nil
	}
	r, ctx, name, loc, h, st, rid, corrupt := s.r, s.ctx, s.name, s.loc, s.h, s.st, s.rid, s.corrupt
	man, nextGen := s.man, s.nextGen
	var np int
	var nm *Manifest
	var err error
	if corrupt == nil {
		for _, id := range st.Known {
			rid.ids[id] = struct{}{}
		}
		np, nm, err = r.pushPi(ctx, name, loc.path, man, nextGen, st, rid)
		if errors.Is(err, errRewritten) {
			// Compare the whole file with the whole remote copy.
			st.P, st.PTail, st.F, st.Known, st.Held = 0, "", 0, nil, nil
			np, nm, err = r.pushPi(ctx, name, loc.path, man, nextGen, st, nil)
		}
	}
	if corrupt != nil || (err != nil && errors.Is(err, ErrCorruptRemote) && man != nil) {
		// A torn or foreign segment: publish a new generation built
		// from the local copy and the remote's readable segments.
		np, nm, err = r.healPi(ctx, name, loc.path, man, nextGen, st)
		s.rep.Healed = err == nil
	}
	if err != nil {
		return err
	}
	s.rep.Pushed = np
	s.pushed = true
	if nm != nil {
		s.man = nm
		// The older generations are no longer needed; a reader that
		// listed one of them lists again.
		if h != nil {
			for _, k := range append([]string{h.key}, h.older...) {
				_ = r.b.remove(ctx, k)
			}
		}
	}
	if s.man != nil {
		st.noteRemote(s.man)
	}
	st.Pushed = true
	return nil
}

// finish records the local file when no push read it, and names the
// state of the session.
func (s *piReconcile) finish() (SessionReport, *sessionState, error) {
	loc, st, rep := s.loc, s.st, &s.rep
	if loc != nil && !s.pushed {
		// No push read the file: the record is the file as the scan saw
		// it plus what the merge appended; anything more (pi appended
		// meanwhile) may be missing remotely.
		st.Path = loc.path
		fi, err := s.r.opts.fs().Lstat(loc.path)
		if err != nil || fi.Size() != loc.size+s.grown {
			st.Pushed = false
		}
		if err == nil {
			st.Size, st.Mtime = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	if loc != nil {
		rep.Path = loc.path
	}
	if s.man == nil && s.m == modePull {
		return *rep, nil, nil
	}
	switch {
	case rep.Pushed > 0 && (rep.Pulled > 0 || rep.Created):
		rep.State = "pushed+pulled"
	case rep.Pushed > 0:
		rep.State = "pushed"
	case rep.Pulled > 0 || rep.Created:
		rep.State = "pulled"
	default:
		rep.State = "in sync"
	}
	return *rep, st, nil
}

// maxKnown bounds the ids of merged lines the state remembers (Known).
const maxKnown = 10000

// remoteIDs are the ids of the remote lines that may be among the local
// lines after P, and the remote copy's header id when segment 0 was read.
type remoteIDs struct {
	ids        map[string]struct{}
	header     string
	haveHeader bool
}

// noteRemote records the manifest both sides now know.
func (st *sessionState) noteRemote(m *Manifest) {
	st.Gen, st.Segs = m.Gen, len(m.Segments)
	st.Last = ""
	if n := len(m.Segments); n > 0 {
		st.Last = m.Segments[n-1].Object
	}
}

// olderManifest returns the newest readable manifest among h's older
// generations, or nil.
func (r *Remote) olderManifest(ctx context.Context, h *head) *Manifest {
	for i := len(h.older) - 1; i >= 0; i-- {
		k := h.older[i]
		_, _, gen, ok := parseManifestKey(strings.TrimPrefix(k, "m/"))
		if !ok {
			continue
		}
		if m, err := r.b.getManifest(ctx, &head{kind: h.kind, name: h.name, gen: gen, key: k}); err == nil {
			return m
		}
	}
	return nil
}

// validState returns the part of old that still holds: the remote must
// extend the manifest old saw, and the local file must still hold the
// bytes before P. Without a record that holds, it finds how much of the
// remote copy the local file holds byte for byte (align), so that a new
// machine, a lost cache or a remote copy compacted since compares
// without downloading what both sides have.
func (r *Remote) validState(old *sessionState, loc *local, man *Manifest) *sessionState {
	st := &sessionState{}
	if loc == nil {
		return st
	}
	if old != nil && old.Path == loc.path && man != nil && old.Segs <= len(man.Segments) && old.Gen <= man.Gen &&
		(old.Segs == 0 || man.Segments[old.Segs-1].Object == old.Last) && old.Q <= old.Segs && old.F <= old.Segs {
		c := *old
		if loc.size < c.P {
			c.P, c.PTail, c.F, c.Known, c.Held = 0, "", 0, nil, nil
		} else if sum, err := r.tailSum(loc.path, c.P); err != nil || sum != c.PTail {
			c.P, c.PTail, c.F, c.Known, c.Held = 0, "", 0, nil, nil
		}
		return &c
	}
	if man == nil {
		return st
	}
	p, k := r.align(loc.path, man)
	if k > 0 {
		st.Path, st.P, st.F, st.Q = loc.path, p, k, k
		st.PTail, _ = r.tailSum(loc.path, p)
	}
	return st
}

// plainSum is the sha256 of a segment's plain bytes, where the manifest
// says it: given, or the stored bytes' when they are the plain ones.
func plainSum(s *Segment, encrypted bool) string {
	switch {
	case s.PlainSHA256 != "":
		return s.PlainSHA256
	case s.inline() || (!encrypted && s.Size == s.Plain):
		return s.SHA256
	}
	return ""
}

// align returns how many of man's first segments the local file holds
// byte for byte from its start, and where they end in it: segments are
// compared by the sha256 of their plain bytes, and the local bytes read
// for it, never the remote ones.
func (r *Remote) align(path string, man *Manifest) (p int64, k int) {
	f, err := r.opts.fs().OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0
	}
	return alignFrom(f, fi.Size(), man, 0, 0)
}

// alignFrom is align from segment k, which starts at p in the local
// file f (size bytes).
func alignFrom(f io.ReaderAt, size int64, man *Manifest, k int, p int64) (int64, int) {
	buf := make([]byte, 256<<10)
	for k < len(man.Segments) {
		s := &man.Segments[k]
		want := plainSum(s, man.Encrypted)
		if want == "" || p+s.Plain > size {
			break
		}
		h := sha256.New()
		if _, err := io.CopyBuffer(h, io.NewSectionReader(f, p, s.Plain), buf); err != nil || hex.EncodeToString(h.Sum(nil)) != want {
			break
		}
		p += s.Plain
		k++
	}
	return p, k
}

// tailSum is the sha256 of the up to tailLen bytes before off in path.
func (r *Remote) tailSum(path string, off int64) (string, error) {
	start := max(0, off-tailLen)
	f, err := r.opts.fs().OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, off-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return "", err
	}
	h := sha256.Sum256(buf)
	return hex.EncodeToString(h[:]), nil
}

// setMember replaces the value of a top-level member of obj.
func setMember(obj []byte, key, value string) ([]byte, error) {
	start, end := -1, -1
	err := jsonl.Members(obj, func(m *jsonl.Member) bool {
		if m.KeyString() == key {
			start, end = m.ValStart, m.ValStart+len(m.Value)
		}
		return true
	})
	if err != nil || start < 0 {
		return nil, fmt.Errorf("set %s: no such member", key)
	}
	out := make([]byte, 0, len(obj)+len(value))
	out = append(out, obj[:start]...)
	out = append(out, value...)
	return append(out, obj[end:]...), nil
}

// markerLabel is the label of a sync marker (see merge).
const markerLabel = "sessctl sync: remote tip"

// derivedID returns the 8 hex digits of a deterministic id.
func derivedID(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte("sessctl-sync\x00" + kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}

func markerID(parent, target string) string { return derivedID("marker", parent, target) }

// isMarker reports whether e is a sync marker: a label entry whose id is
// derived from its parent and target.
func isMarker(e *jsonl.Entry) bool {
	if e.Type != jsonl.TypeLabel || e.ParentKind != jsonl.KindString {
		return false
	}
	t, ok := e.StringField("targetId")
	return ok && e.ID == markerID(e.ParentID, t)
}

// conflictID is the id a version of entry id with bytes raw is kept under.
func conflictID(id string, raw []byte) string { return derivedID("conflict", id, sha(raw)) }

type mergeResult struct {
	appended  int
	bytes     int64 // what the merge appended to the file
	conflicts []Conflict
	refused   []RefusedLine // lines whose parent neither copy holds
	orphan    int           // the first of them in remote, or -1
}

// merge appends to the session at path, under its writer lock, the
// remote lines it lacks (see the package documentation for the rule).
// hdr is the remote copy's header line when the lines start at its
// beginning (nil otherwise): a copy of another session is refused. A
// line goes in after its parent, which may come later in remote; one
// whose parent neither copy holds is refused (pos: where each line
// stands), as pi loads only a tree.
func (r *Remote) merge(ctx context.Context, name, path string, hdr []byte, remote [][]byte, pos []RefusedLine) (mergeResult, error) {
	res := mergeResult{orphan: -1}
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: filepath.Dir(path), Command: "sessctl sync", FS: r.opts.FS})
	if err != nil {
		return res, err
	}
	s, err := st.Open(ctx, path, engine.OpenOptions{LockMode: "sync"})
	if err != nil {
		return res, err
	}
	defer s.Close()
	if hdr != nil {
		if err := sameSession("pull", name, headerID(hdr), s.SessionID()); err != nil {
			return res, err
		}
	}
	localLeaf, _ := s.LeafID()
	var add [][]byte
	batch := map[string]int{} // id -> index in add
	has := func(id string) bool {
		if _, ok := batch[id]; ok {
			return true
		}
		_, ok := s.Entry(id)
		return ok
	}
	parents := map[string]string{}
	// place takes a line into the batch once its parent is there: a line
	// whose parent has not come yet waits for it (remote line i is where
	// it comes from). The same id with other bytes is a conflict.
	type waiter struct {
		line []byte
		i    int
	}
	waiting := map[string][]waiter{} // parent id -> the lines waiting for it
	var place func(line []byte, i int)
	// conflict keeps both versions of entry e (kept, the line that
	// holds its id, and line) under ids derived from their bytes, each
	// placed after its own parent.
	conflict := func(e *jsonl.Entry, kept, line []byte, i int) {
		c := Conflict{ID: e.ID}
		for _, v := range [][]byte{kept, line} {
			id := conflictID(e.ID, v)
			c.Copies = append(c.Copies, id)
			if has(id) {
				continue
			}
			if cp, err := setMember(v, "id", string(jsonl.AppendString(nil, id))); err == nil {
				place(cp, i)
			}
		}
		res.conflicts = append(res.conflicts, c)
	}
	place = func(line []byte, i int) {
		e, err := jsonl.ParseEntry(line)
		if err != nil || e.IsHeader() || e.IDKind != jsonl.KindString {
			return
		}
		if ex, ok := s.Entry(e.ID); ok {
			if !r.same(ex.Raw, line) {
				conflict(&e, ex.Raw, line, i)
			}
			return
		}
		if j, ok := batch[e.ID]; ok {
			// The remote copy holds the id twice, with other bytes.
			if !bytes.Equal(add[j], line) {
				conflict(&e, add[j], line, i)
			}
			return
		}
		switch {
		case e.ParentKind == jsonl.KindString && e.ParentID == e.ID:
			res.refused = append(res.refused, refusedAt(pos, i, "entry "+e.ID+" is its own parent"))
			return
		case e.ParentKind == jsonl.KindString && !has(e.ParentID):
			waiting[e.ParentID] = append(waiting[e.ParentID], waiter{line, i})
			return
		case e.ParentKind != jsonl.KindString && e.ParentKind != jsonl.KindNull && e.ParentKind != jsonl.KindAbsent:
			res.refused = append(res.refused, refusedAt(pos, i, "entry "+e.ID+" has a parentId that is not a string"))
			return
		}
		batch[e.ID] = len(add)
		add = append(add, line)
		if e.ParentKind == jsonl.KindString {
			parents[e.ID] = e.ParentID
		}
		next := waiting[e.ID]
		delete(waiting, e.ID)
		for _, w := range next {
			place(w.line, w.i)
		}
	}
	for i, line := range remote {
		place(line, i)
	}
	for parent, ws := range waiting {
		for _, w := range ws {
			e, _ := jsonl.ParseEntry(w.line)
			res.refused = append(res.refused, refusedAt(pos, w.i, "the parent "+parent+" of entry "+e.ID+" is in neither copy (yet)"))
			if res.orphan < 0 || w.i < res.orphan {
				res.orphan = w.i
			}
		}
	}
	slices.SortFunc(res.refused, func(a, b RefusedLine) int {
		return cmp.Or(strings.Compare(a.Object, b.Object), cmp.Compare(a.Line, b.Line))
	})
	if len(add) == 0 {
		return res, nil
	}
	res.appended = len(add)
	// The leaf rule: pi's leaf is the last line. When the last line
	// appended does not descend from the local leaf, a marker (a label
	// on the remote tip, its parent the local leaf) is appended after
	// it, so the local leaf stays the active one.
	last, _ := jsonl.ParseEntry(add[len(add)-1])
	if localLeaf != "" && !descends(last.ID, localLeaf, parents, s) {
		id := markerID(localLeaf, last.ID)
		if !has(id) {
			ts := last.Timestamp
			if le, ok := s.Entry(localLeaf); ok && le.Timestamp > ts {
				ts = le.Timestamp
			}
			if ts == "" {
				ts = jsonl.ISOTime(r.opts.now().UTC().Truncate(time.Millisecond))
			}
			var b jsonl.ObjectBuilder
			b.Start(256).String("type", jsonl.TypeLabel).String("id", id).String("parentId", localLeaf).String("timestamp", ts).String("targetId", last.ID).String("label", markerLabel)
			add = append(add, b.Bytes())
		}
	}
	if err := s.AppendLines(add); err != nil {
		return mergeResult{orphan: -1}, err
	}
	for _, l := range add {
		res.bytes += int64(len(l)) + 1
	}
	return res, s.Close()
}

// refusedAt is the refusal of remote line i (pos: where each stands).
func refusedAt(pos []RefusedLine, i int, why string) RefusedLine {
	var l RefusedLine
	if i < len(pos) {
		l = pos[i]
	}
	l.Reason = why
	return l
}

// descends reports whether id's parent chain reaches anc.
func descends(id, anc string, parents map[string]string, s *engine.Session) bool {
	seen := map[string]bool{}
	for id != "" && !seen[id] {
		if id == anc {
			return true
		}
		seen[id] = true
		if p, ok := parents[id]; ok {
			id = p
			continue
		}
		e, ok := s.Entry(id)
		if !ok || e.ParentKind != jsonl.KindString {
			return false
		}
		id = e.ParentID
	}
	return false
}

// same reports whether a local and a remote line are one entry: equal
// bytes, or the remote is the local line as Transform uploads it.
func (r *Remote) same(local, remote []byte) bool {
	if bytes.Equal(local, remote) {
		return true
	}
	if r.opts.Transform == nil {
		return false
	}
	t, err := r.opts.Transform(bytes.Clone(local))
	return err == nil && bytes.Equal(t, remote)
}
