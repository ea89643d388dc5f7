package replica

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
)

// tailLen is how many bytes before P the state's checksum covers.
const tailLen = 4096

// piSession brings one JSONL session's two sides together as m asks.
// It returns the state to remember (nil: forget the session).
func (r *Remote) piSession(ctx context.Context, m mode, name string, loc *local, h *head, old *sessionState) (rep SessionReport, st *sessionState, err error) {
	rep = SessionReport{Kind: KindPi, Name: name}
	var man *Manifest
	nextGen := int64(1)
	if h != nil {
		nextGen = h.gen + 1
		man, err = r.b.getManifest(ctx, h)
		if err != nil {
			if !errors.Is(err, ErrCorruptRemote) {
				return rep, old, err
			}
			// A torn or foreign manifest: fall back to an older valid
			// generation; the next push publishes above it.
			man = r.olderManifest(ctx, h)
			if man == nil && loc == nil {
				return rep, old, err
			}
			if man != nil && (m == modePush || m == modeSync) {
				// Publish the readable generation above the torn one, and
				// drop the torn one with the other older generations.
				nm := *man
				nm.Gen, nm.Host, nm.Time = nextGen, r.opts.Host, r.opts.now().UTC().Format(time.RFC3339)
				if err := r.b.putManifest(ctx, &nm); err != nil {
					return rep, old, err
				}
				for _, k := range append([]string{h.key}, h.older...) {
					r.b.st.requests.Add(1)
					_ = r.b.remove(ctx, k)
				}
				man, nextGen = &nm, nextGen+1
				h = nil
			}
		}
	}
	localSame := old != nil && loc != nil && old.Path == loc.path && old.Size == loc.size && old.Mtime == loc.mtime
	st = r.validState(old, loc, man)
	pushedBefore := st.Pushed && localSame
	st.Pushed = false
	segCache := map[int][]byte{}
	fetch := func(i int) ([]byte, error) {
		if d, ok := segCache[i]; ok {
			return d, nil
		}
		s := man.Segments[i]
		d, err := r.b.getData(ctx, s.Object, s.SHA256, s.Plain)
		if err != nil {
			return nil, err
		}
		segCache[i] = d
		return d, nil
	}

	// Verify: read every segment; a torn or foreign one is rebuilt from
	// this machine's copy by the push below.
	corrupt := false
	if r.opts.Verify && man != nil {
		for i := range man.Segments {
			if _, err := fetch(i); err != nil {
				if !errors.Is(err, ErrCorruptRemote) {
					return rep, st, err
				}
				corrupt = true
			}
		}
		if corrupt && (loc == nil || m == modePull || m == modeStatus) {
			return rep, st, fmt.Errorf("verify %s: %w", name, ErrCorruptRemote)
		}
	}

	// Pull: the remote's segments the local copy has not merged.
	if (m == modePull || m == modeSync) && man != nil && (loc == nil || st.Q < len(man.Segments)) {
		if loc == nil {
			path, n, refused, err := r.createLocal(ctx, name, man, fetch)
			if err != nil {
				return rep, st, err
			}
			rep.Refused = refused
			fi, err := os.Lstat(path)
			if err != nil {
				return rep, st, err
			}
			loc = &local{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			rep.Created, rep.Pulled = true, n
			pushedBefore = true // the local copy is the remote one
			st = &sessionState{Path: path, P: fi.Size(), F: len(man.Segments), Q: len(man.Segments)}
			st.PTail, _ = tailSum(path, st.P)
			st.noteRemote(man)
		} else {
			var lines [][]byte
			var hdr []byte // the remote header, when segment 0 is merged
			var refused []RefusedLine
			var ferr error
			for i := st.Q; i < len(man.Segments); i++ {
				d, err := fetch(i)
				if err != nil {
					ferr = err
					break
				}
				h, ls, ref := segmentLines(man.Segments[i].Object, d, i == 0)
				if i == 0 {
					if h == nil {
						return rep, st, fmt.Errorf("pull %s: the remote copy does not start with a complete session header line", name)
					}
					hdr = h
				}
				lines = append(lines, ls...)
				refused = append(refused, ref...)
			}
			switch {
			case ferr != nil && errors.Is(ferr, ErrCorruptRemote) && (m == modeSync || corrupt):
				// The push below rebuilds the remote copy from this one.
			case ferr != nil:
				return rep, st, ferr
			default:
				res, err := r.merge(ctx, name, loc.path, hdr, lines)
				if err != nil {
					return rep, st, err
				}
				rep.Pulled, rep.Conflicts, rep.Refused = res.appended, res.conflicts, refused
				if res.appended > 0 {
					st.F = min(st.F, st.Q)
				}
				st.Q = len(man.Segments)
				st.noteRemote(man)
			}
		}
	}

	// Push: the local lines the remote lacks.
	if (m == modePush || m == modeSync) && loc != nil {
		var n int
		var nm *Manifest
		if !corrupt {
			n, nm, err = r.pushPi(ctx, name, loc.path, man, nextGen, st, fetch)
		}
		if corrupt || (err != nil && errors.Is(err, ErrCorruptRemote) && man != nil) {
			// A torn or foreign segment: publish a new generation built
			// from the local copy and the remote's readable segments.
			n, nm, err = r.healPi(ctx, name, loc.path, man, nextGen, st, fetch)
			rep.Healed = err == nil
		}
		if err != nil {
			return rep, st, err
		}
		rep.Pushed = n
		if nm != nil {
			man = nm
			// The older generations are no longer needed; a reader that
			// listed one of them lists again.
			if h != nil {
				for _, k := range append([]string{h.key}, h.older...) {
					r.b.st.requests.Add(1)
					_ = r.b.remove(ctx, k)
				}
			}
		}
		if man != nil {
			st.noteRemote(man)
		}
		st.Pushed = true
	} else {
		st.Pushed = pushedBefore
	}
	if loc != nil {
		if fi, err := os.Lstat(loc.path); err == nil {
			st.Path, st.Size, st.Mtime = loc.path, fi.Size(), fi.ModTime().UnixNano()
		}
		rep.Path = loc.path
	}
	if man == nil && m == modePull {
		return rep, nil, nil
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
	return rep, st, nil
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
// bytes before P.
func (r *Remote) validState(old *sessionState, loc *local, man *Manifest) *sessionState {
	st := &sessionState{}
	if old == nil || loc == nil || old.Path != loc.path {
		return st
	}
	remoteOK := man != nil && old.Segs <= len(man.Segments) && old.Gen <= man.Gen &&
		(old.Segs == 0 || man.Segments[old.Segs-1].Object == old.Last)
	if !remoteOK {
		return st
	}
	c := *old
	if loc.size < c.P {
		c.P, c.PTail, c.F = 0, "", 0
	} else if sum, err := tailSum(loc.path, c.P); err != nil || sum != c.PTail {
		c.P, c.PTail, c.F = 0, "", 0
	}
	return &c
}

// tailSum is the sha256 of the up to tailLen bytes before off in path.
func tailSum(path string, off int64) (string, error) {
	start := max(0, off-tailLen)
	f, err := os.Open(path)
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

// appendLines splits data (whole lines) into lines without their '\n'.
func appendLines(dst [][]byte, data []byte) [][]byte {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(dst, data)
		}
		dst = append(dst, data[:i])
		data = data[i+1:]
	}
	return dst
}

// readFrom reads the complete lines of path from off: the bytes up to
// the last '\n' (a line another writer is still writing is left for
// later).
func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < off {
		return nil, fmt.Errorf("read %s: the file shrank below %d bytes", path, off)
	}
	data := make([]byte, fi.Size()-off)
	if _, err := io.ReadFull(io.NewSectionReader(f, off, int64(len(data))), data); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	i := bytes.LastIndexByte(data, '\n')
	return data[:i+1], nil
}

// createLocal writes a session the store does not have from all its
// segments, into pi's directory for its (mapped) cwd: the header and the
// complete entry lines (see segmentLines; the others are returned as
// refused). It returns the path and the number of entry lines written.
func (r *Remote) createLocal(ctx context.Context, name string, man *Manifest, fetch func(int) ([]byte, error)) (path string, n int, refused []RefusedLine, err error) {
	var hdr []byte
	var lines [][]byte
	for i := range man.Segments {
		d, err := fetch(i)
		if err != nil {
			return "", 0, nil, err
		}
		h, ls, ref := segmentLines(man.Segments[i].Object, d, i == 0)
		if i == 0 {
			if h == nil {
				return "", 0, nil, fmt.Errorf("restore %s: the remote copy does not start with a complete session header line: %w", name, ErrCorruptRemote)
			}
			hdr = h
		}
		lines = append(lines, ls...)
		refused = append(refused, ref...)
	}
	if err := sameSession("restore", name, headerID(hdr), ""); err != nil {
		return "", 0, nil, err
	}
	e, _ := jsonl.ParseEntry(hdr)
	cwd, _ := e.StringField("cwd")
	if mapped := r.opts.mapCwd(cwd); mapped != cwd {
		if hdr, err = setMember(hdr, "cwd", string(jsonl.AppendString(nil, mapped))); err != nil {
			return "", 0, nil, fmt.Errorf("restore %s: %w", name, err)
		}
		cwd = mapped
	}
	if cwd == "" {
		return "", 0, nil, fmt.Errorf("restore %s: the header names no cwd: %w", name, ErrCorruptRemote)
	}
	size := len(hdr) + 1
	for _, l := range lines {
		size += len(l) + 1
	}
	data := make([]byte, 0, size)
	data = append(append(data, hdr...), '\n')
	for _, l := range lines {
		data = append(append(data, l...), '\n')
	}
	path = filepath.Join(layout.DefaultSessionDir(r.opts.AgentDir, cwd), name)
	_, err = sessionfile.WriteWhole(ctx, path, data, func([]byte) error {
		return fmt.Errorf("restore %s: %w", path, fs.ErrExist)
	}, sessionfile.WriteOptions{Lock: sessionfile.LockOptions{Command: "sessctl sync", Mode: "sync", FS: r.opts.FS}})
	if errors.Is(err, fs.ErrExist) {
		// Written meanwhile (another sync): merge into it instead.
		res, err := r.merge(ctx, name, path, hdr, lines)
		return path, res.appended, refused, err
	}
	if err != nil {
		return "", 0, nil, err
	}
	return path, len(lines), refused, nil
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
	conflicts []Conflict
}

// merge appends to the session at path, under its writer lock, the
// remote lines it lacks (see the package documentation for the rule).
// hdr is the remote copy's header line when the lines start at its
// beginning (nil otherwise): a copy of another session is refused.
func (r *Remote) merge(ctx context.Context, name, path string, hdr []byte, remote [][]byte) (mergeResult, error) {
	var res mergeResult
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
	// conflict keeps both versions of entry e (kept, the line that
	// holds its id, and line) under ids derived from their bytes.
	conflict := func(e *jsonl.Entry, kept, line []byte) {
		c := Conflict{ID: e.ID}
		for _, v := range [][]byte{kept, line} {
			id := conflictID(e.ID, v)
			c.Copies = append(c.Copies, id)
			if has(id) {
				continue
			}
			cp, err := setMember(v, "id", string(jsonl.AppendString(nil, id)))
			if err != nil {
				continue
			}
			batch[id] = len(add)
			add = append(add, cp)
			parents[id] = e.ParentID
		}
		res.conflicts = append(res.conflicts, c)
	}
	for _, line := range remote {
		e, err := jsonl.ParseEntry(line)
		if err != nil || e.IsHeader() || e.IDKind != jsonl.KindString {
			continue
		}
		if ex, ok := s.Entry(e.ID); ok {
			if !r.same(ex.Raw, line) {
				conflict(&e, ex.Raw, line)
			}
			continue
		}
		if i, ok := batch[e.ID]; ok {
			// The remote copy holds the id twice, with other bytes.
			if !bytes.Equal(add[i], line) {
				conflict(&e, add[i], line)
			}
			continue
		}
		batch[e.ID] = len(add)
		add = append(add, line)
		if e.ParentKind == jsonl.KindString {
			parents[e.ID] = e.ParentID
		}
	}
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
		return mergeResult{}, err
	}
	return res, s.Close()
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

// pushPi uploads the local lines after st.P that the remote lacks, as one
// new segment and manifest generation. It returns the lines pushed and
// the new manifest (nil when nothing was pushed), and moves st.
func (r *Remote) pushPi(ctx context.Context, name, path string, man *Manifest, nextGen int64, st *sessionState, fetch func(int) ([]byte, error)) (int, *Manifest, error) {
	data, err := readFrom(path, st.P)
	if err != nil {
		return 0, nil, err
	}
	lines := appendLines(nil, data)
	// Where each line starts, to hold P back at an unpushed marker.
	offs := make([]int64, len(lines)+1)
	off := st.P
	for i, l := range lines {
		offs[i] = off
		off += int64(len(l)) + 1
	}
	offs[len(lines)] = off
	end := off

	// A file compared from its start: its header must be the session the
	// name says, and the remote copy's (checked below) the same.
	localID := ""
	if st.P == 0 && len(lines) > 0 {
		if localID = headerID(lines[0]); localID != "" {
			if id, ok := nameID(name); ok && id != localID {
				return 0, nil, fmt.Errorf("push %s: the header has session id %q, the file name %q: %w", path, localID, id, ErrSessionMismatch)
			}
		}
	}
	// The remote lines that may be among them.
	remote := map[string][]byte{}
	if man != nil {
		from := st.F
		if st.P == 0 {
			from = 0
		}
		for i := from; i < len(man.Segments); i++ {
			d, err := fetch(i)
			if err != nil {
				return 0, nil, err
			}
			if i == 0 && localID != "" {
				first, _, _ := bytes.Cut(d, []byte{'\n'})
				if err := sameSession("push", name, headerID(first), localID); err != nil {
					return 0, nil, err
				}
			}
			// Only complete entry lines are in the remote copy: a pull
			// takes no other (segmentLines).
			_, ls, _ := segmentLines(man.Segments[i].Object, d, i == 0)
			for _, l := range ls {
				if e, err := jsonl.ParseEntry(l); err == nil {
					remote[e.ID] = l
				}
			}
		}
	}
	type cand struct {
		i      int
		e      jsonl.Entry
		marker bool
	}
	var cands []cand
	header := -1
	for i, l := range lines {
		e, err := jsonl.ParseEntry(l)
		if err != nil {
			continue // not an object: readers skip it too
		}
		if e.IsHeader() {
			if st.P == 0 && i == 0 {
				header = i
			}
			continue
		}
		if e.IDKind != jsonl.KindString {
			continue
		}
		if rl, ok := remote[e.ID]; ok {
			_ = rl // the same entry, or a conflict a pull keeps both sides of
			continue
		}
		cands = append(cands, cand{i: i, e: e, marker: isMarker(&e)})
	}
	// Markers go up only when something pushed hangs below them.
	need := map[string]bool{}
	keep := make([]bool, len(cands))
	for k := len(cands) - 1; k >= 0; k-- {
		c := cands[k]
		if c.marker && !need[c.e.ID] {
			continue
		}
		keep[k] = true
		if c.e.ParentKind == jsonl.KindString {
			need[c.e.ParentID] = true
		}
	}
	newP := end
	for k, c := range cands {
		if !keep[k] {
			newP = offs[c.i]
			break
		}
	}
	var seg []byte
	n := 0
	add := func(l []byte) error {
		if r.opts.Transform != nil {
			t, err := r.opts.Transform(bytes.Clone(l))
			if err != nil {
				return fmt.Errorf("push %s: transform: %w", path, err)
			}
			l = t
		}
		seg = append(seg, l...)
		seg = append(seg, '\n')
		return nil
	}
	if man == nil {
		if header < 0 {
			return 0, nil, fmt.Errorf("push %s: the file does not start with a session header", path)
		}
		if err := add(lines[header]); err != nil {
			return 0, nil, err
		}
	}
	for k, c := range cands {
		if keep[k] {
			if err := add(lines[c.i]); err != nil {
				return 0, nil, err
			}
			n++
		}
	}
	if len(seg) == 0 {
		st.P = newP
		st.PTail, _ = tailSum(path, st.P)
		if man != nil {
			st.F = len(man.Segments)
		}
		return 0, nil, nil
	}
	obj, sum, size, err := r.b.putData(ctx, seg)
	if err != nil {
		return 0, nil, err
	}
	nm := &Manifest{Format: FormatVersion, Kind: KindPi, Name: name, Gen: nextGen, Host: r.opts.Host,
		Time: r.opts.now().UTC().Format(time.RFC3339), Encrypted: len(r.opts.Recipients) > 0}
	if man != nil {
		nm.Segments = append(nm.Segments, man.Segments...)
		nm.Size, nm.Lines = man.Size, man.Lines
	}
	nm.Segments = append(nm.Segments, Segment{Object: obj, SHA256: sum, Size: size, Plain: int64(len(seg)), Lines: bytes.Count(seg, []byte{'\n'})})
	nm.Size += int64(len(seg))
	nm.Lines += bytes.Count(seg, []byte{'\n'})
	next := *st
	next.Pending = nil
	next.P = newP
	next.PTail, _ = tailSum(path, next.P)
	next.F = len(nm.Segments)
	if man == nil || st.Q >= len(man.Segments) {
		next.Q = len(nm.Segments) // the new segment's lines are local ones
	}
	if sent, err := r.b.publish(ctx, nm); err != nil {
		if sent != nil && !errors.Is(err, errRace) {
			// The manifest may have arrived: remember what this push
			// would have left, for the next run to check (settle).
			p := next
			p.noteRemote(nm)
			p.Path, p.Size, p.Mtime, p.Pushed = path, end, 0, true
			if fi, err := r.opts.fs().Lstat(path); err == nil && fi.Size() == end {
				p.Mtime = fi.ModTime().UnixNano()
			}
			st.pending(sent, p)
		}
		return 0, nil, err
	}
	*st = next
	return n, nm, nil
}

// healPi replaces a remote copy that holds an unreadable segment: the new
// generation's segments are the local file's lines and the lines of the
// readable remote segments the local file lacks. Lines only the bad
// segment held come back from the machines that have them: their state
// no longer matches the remote, so their next push compares in full.
func (r *Remote) healPi(ctx context.Context, name, path string, man *Manifest, nextGen int64, st *sessionState, fetch func(int) ([]byte, error)) (int, *Manifest, error) {
	data, err := readFrom(path, 0)
	if err != nil {
		return 0, nil, err
	}
	have := map[string]bool{}
	var seg0 []byte
	n := 0
	for _, l := range appendLines(nil, data) {
		e, err := jsonl.ParseEntry(l)
		if err != nil || (!e.IsHeader() && e.IDKind != jsonl.KindString) {
			continue
		}
		if r.opts.Transform != nil {
			if l, err = r.opts.Transform(bytes.Clone(l)); err != nil {
				return 0, nil, fmt.Errorf("push %s: transform: %w", path, err)
			}
		}
		if !e.IsHeader() {
			have[e.ID] = true
			n++
		} else if len(seg0) > 0 {
			continue
		}
		seg0 = append(seg0, l...)
		seg0 = append(seg0, '\n')
	}
	var seg1 []byte
	for i := range man.Segments {
		d, err := fetch(i)
		if err != nil {
			continue
		}
		if i == 0 {
			// Never rebuild another session's copy from this file.
			first, _, _ := bytes.Cut(d, []byte{'\n'})
			if rid := headerID(first); rid != "" {
				local, _, _ := bytes.Cut(seg0, []byte{'\n'})
				if err := sameSession("push", name, rid, headerID(local)); err != nil {
					return 0, nil, err
				}
			}
		}
		_, ls, _ := segmentLines(man.Segments[i].Object, d, i == 0)
		for _, l := range ls {
			e, err := jsonl.ParseEntry(l)
			if err != nil || have[e.ID] {
				continue
			}
			have[e.ID] = true
			seg1 = append(seg1, l...)
			seg1 = append(seg1, '\n')
		}
	}
	nm := &Manifest{Format: FormatVersion, Kind: KindPi, Name: name, Gen: nextGen, Host: r.opts.Host,
		Time: r.opts.now().UTC().Format(time.RFC3339), Encrypted: len(r.opts.Recipients) > 0}
	for _, seg := range [][]byte{seg0, seg1} {
		if len(seg) == 0 {
			continue
		}
		obj, sum, size, err := r.b.putData(ctx, seg)
		if err != nil {
			return 0, nil, err
		}
		lines := bytes.Count(seg, []byte{'\n'})
		nm.Segments = append(nm.Segments, Segment{Object: obj, SHA256: sum, Size: size, Plain: int64(len(seg)), Lines: lines})
		nm.Size += int64(len(seg))
		nm.Lines += lines
	}
	if err := r.b.putManifest(ctx, nm); err != nil {
		return 0, nil, err
	}
	*st = sessionState{Path: path, P: int64(len(data)), F: len(nm.Segments), Q: 1}
	st.PTail, _ = tailSum(path, st.P)
	return n, nm, nil
}
