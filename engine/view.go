package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// View is a session file read to be shown, exported, counted or copied
// rather than written: what a read-only Session knows of it (the header,
// the entries' envelopes, the tree, the leaf, the labels and the name),
// without holding its messages. The bytes of the message entries stay in
// the file, and Lines reads them back, a few at a time, when they are
// needed; every other entry keeps its bytes. What it holds is the
// entries' envelopes, about 200 bytes an entry, and the entries that are
// not messages: a session of a gigabyte is shown in a small part of its
// size. Store.View makes one.
//
// A View reads the file once, without a lock, as a read-only OpenFile
// does (and through the same offset index, which it keeps too); it sees
// the same entries, leaf, branches, labels and name. A file that must be
// migrated (version 1 or 2), and one without a header to stand for, are
// read whole by a read-only open instead, and the View answers from that
// session. Lines checks each line it reads back against the envelope that
// was parsed: a file rewritten since (pi rewrites a file it migrates)
// fails there, while lines appended since are not seen until Update
// reads them.
type View struct {
	path   string
	fsys   vfs.FS
	f      vfs.File
	header Entry
	ix     *tree.Index

	// What Update needs: the bytes read (the end of the last complete
	// line), the lines read, the last bytes before size (to tell that the
	// file only grew), the lines skipped, whether message bytes are kept,
	// and whether the file ended cleanly (a torn or unterminated last line
	// is not read on from).
	size      int64
	lines     int
	check     []byte
	malformed int
	keep      bool
	clean     bool

	// s is the whole session, read instead where the lean read will not
	// do (see View).
	s *Session
}

// View reads the session name stands for (see Resolve) as a View. The
// caller closes it. Errors are a read-only Open's.
func (st *Store) View(ctx context.Context, name string) (*View, error) {
	path, err := st.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	o := st.openOptions(OpenOptions{ReadOnly: true})
	return openView(ctx, path, o)
}

// ViewOptions configure Store.ViewWith. The zero value is Store.View's.
type ViewOptions struct {
	// KeepBelow keeps the bytes of the message entries too, for a file
	// smaller than KeepBelow bytes: a small session shown whole is not
	// worth reading twice. Lines then reads nothing back.
	KeepBelow int64
}

// ViewWith is View with options.
func (st *Store) ViewWith(ctx context.Context, name string, vo ViewOptions) (*View, error) {
	path, err := st.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	o := st.openOptions(OpenOptions{ReadOnly: true})
	return openViewWith(ctx, path, o, vo)
}

// openView is Store.View of the file at path, with the options of a
// read-only open.
func openView(ctx context.Context, path string, opts options) (*View, error) {
	return openViewWith(ctx, path, opts, ViewOptions{})
}

// openViewWith is openView with ViewOptions.
func openViewWith(ctx context.Context, path string, opts options, vo ViewOptions) (*View, error) {
	opts.ReadOnly = true
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	for range 2 {
		v, err := openViewLean(opts, abs, vo)
		if errors.Is(err, errWholeFile) {
			break
		}
		if !errors.Is(err, errReadAgain) {
			return v, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	s, err := open(ctx, abs, opts)
	if err != nil {
		return nil, err
	}
	return &View{path: s.SessionFile(), s: s, header: s.Header().Entry, malformed: s.Recovery().Malformed}, nil
}

// openViewLean reads the file at abs in pieces, keeping the bytes of the
// entries that are not messages (or takes the same from its offset
// index). It returns errWholeFile for every file it does not answer for
// (Open then reads it, and reports what is wrong with it), and
// errReadAgain when the file changed while it was read.
func openViewLean(opts options, abs string, vo ViewOptions) (*View, error) {
	fsys := opts.fs()
	f, err := fsys.OpenFile(abs, os.O_RDONLY, 0)
	if err != nil {
		return nil, errWholeFile
	}
	keepOpen := false
	defer func() {
		if !keepOpen {
			_ = f.Close()
		}
	}()
	before, err := f.Stat()
	if err != nil || !before.Mode().IsRegular() {
		return nil, errWholeFile
	}
	keep := before.Size() < vo.KeepBelow
	ixPath := offsetIndexFile(opts, abs, before)
	var p *jsonl.Parsed
	if ixPath != "" && !keep {
		p, _ = detachedFromIndex(fsys, f, ixPath, abs, before)
	}
	parsed := p == nil
	if parsed {
		p, err = jsonl.ParseReader(f, viewChunk, keepFilter(keep))
		if err != nil || len(p.Entries) == 0 || checkHeader(abs, p) != nil ||
			migrate.Needed(migrate.VersionOf(&p.Entries[0])) {
			return nil, errWholeFile
		}
	}
	after, err := f.Stat()
	if err != nil {
		return nil, errWholeFile
	}
	if !sameStat(before, after) || p.Size != after.Size() {
		return nil, errReadAgain
	}
	v := &View{path: abs, fsys: fsys, f: f, header: p.Entries[0], ix: tree.Build(p.Entries[1:]),
		size: p.Size, lines: p.Lines, malformed: len(p.Malformed), keep: keep, clean: p.Tail == jsonl.TailClean}
	v.check = tailBytes(f, v.size)
	if parsed && ixPath != "" && readBack(f, &p.Entries[len(p.Entries)-1]) == nil {
		// The next View, ReadContext or read-only open of the file need
		// not parse it (the index needs the last line's checksum).
		keepOffsetIndex(fsys, opts, ixPath, abs, after, p, func() []int32 {
			if parents, ok := v.ix.ParentPositions(p.Entries); ok {
				return parents
			}
			return tree.ParentPositions(p.Entries)
		})
	}
	keepOpen = true
	return v, nil
}

// Close releases the file.
func (v *View) Close() error {
	if v.s != nil {
		return v.s.Close()
	}
	if v.f == nil {
		return nil
	}
	err := v.f.Close()
	v.f = nil
	return err
}

// keepFilter is the entries a lean read keeps the bytes of: every one
// when keep is set, else all but the messages.
func keepFilter(keep bool) func(e *jsonl.Entry) bool {
	if keep {
		return nil
	}
	return func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage }
}

// tailBytes returns up to 64 bytes of f before off; nil when they cannot
// be read.
func tailBytes(f vfs.File, off int64) []byte {
	n := min(off, 64)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off-n); err != nil {
		return nil
	}
	return b
}

// Malformed returns the number of lines that are not JSON objects, which
// the View skipped (Recovery.Malformed of a read-only open).
func (v *View) Malformed() int { return v.malformed }

// Lean reports whether the message entries are without their bytes,
// which Lines reads back.
func (v *View) Lean() bool { return v.s == nil && v.f != nil && !v.keep }

// ErrStale is returned by View.Update when the View no longer stands for
// its file: the file was replaced, shrank or was rewritten before where
// the View stopped reading, or the View read it whole (a file to migrate).
// A new View reads it.
var ErrStale = errors.New("the session file changed: read it again")

// Update reads the complete lines appended to the file since the View
// read it (or last updated), when the file only grew: the same file, the
// bytes before where the View stopped unchanged. It indexes them as the
// View's other entries (the leaf moves to the last) and returns them, in
// file order; none when nothing was appended. A last line without its
// newline is left for a later Update. An error wrapping ErrStale means
// the file changed otherwise, and a new View must read it. Update must
// not run at the same time as the View's other methods.
func (v *View) Update() ([]*Entry, error) {
	if v.s != nil || v.f == nil {
		return nil, fmt.Errorf("update view of %s: %w", v.path, ErrStale)
	}
	now, err := v.fsys.Stat(v.path)
	if err != nil {
		return nil, fmt.Errorf("update view of %s: %w", v.path, err)
	}
	held, err := v.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("update view of %s: %w", v.path, err)
	}
	switch {
	case !vfs.SameFile(now, held) || vfs.FileID(now) == 0 || now.Size() < v.size || !v.clean:
		return nil, fmt.Errorf("update view of %s: %w", v.path, ErrStale)
	case now.Size() == v.size:
		return nil, nil
	}
	if !bytes.Equal(tailBytes(v.f, v.size), v.check) {
		return nil, fmt.Errorf("update view of %s: %w", v.path, ErrStale)
	}
	p, err := jsonl.ParseReader(io.NewSectionReader(v.f, v.size, now.Size()-v.size), viewChunk, keepFilter(v.keep))
	if err != nil {
		return nil, fmt.Errorf("update view of %s: %w", v.path, err)
	}
	end := p.Size // the end of the last complete line
	if p.Tail != jsonl.TailClean {
		end = p.TailOffset
	}
	var out []*Entry
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Offset >= end {
			break
		}
		e.Offset += v.size
		e.Line += v.lines
		v.ix.Add(e)
		out = append(out, e)
	}
	for _, b := range p.Malformed {
		if b.Offset < end {
			v.malformed++
		}
	}
	v.lines += p.Lines
	if p.Tail != jsonl.TailClean {
		v.lines-- // the last line, read again next time
	}
	v.size += end
	v.check = tailBytes(v.f, v.size)
	return out, nil
}

// index returns the tree of the entries.
func (v *View) index(fn func(ix *tree.Index)) {
	if v.s != nil {
		v.s.Index(fn)
		return
	}
	fn(v.ix)
}

// SessionFile returns the session file's absolute path.
func (v *View) SessionFile() string { return v.path }

// Header returns the session header.
func (v *View) Header() Header {
	if v.s != nil {
		return v.s.Header()
	}
	return jsonl.ParseHeader(*copyEntry(&v.header))
}

// Len returns the number of entries (headers excluded, duplicates
// included).
func (v *View) Len() int {
	n := 0
	v.index(func(ix *tree.Index) { n = ix.Len() })
	return n
}

// Entries returns every entry in file order (headers excluded, duplicates
// included), as Session.Entries, except that the message entries are
// without their bytes (Raw is nil): Lines gives them their bytes. Unlike
// Session.Entries they are not copies but the View's own, so that a
// caller holds them once: they must not be changed.
func (v *View) Entries() []*Entry {
	if v.s != nil {
		return v.s.Entries()
	}
	return v.ix.Entries()[:v.ix.Len():v.ix.Len()]
}

// LeafID returns the id of the leaf entry, as Session.LeafID.
func (v *View) LeafID() (string, bool) {
	id, kind := "", KindNull
	v.index(func(ix *tree.Index) { id, kind = ix.Leaf() })
	return id, kind == KindString
}

// BranchPath returns the root-to-entry path of id, or of the leaf when id
// is "", as Session.BranchPath, with the message entries without their
// bytes; the entries are the View's own, as Entries gives them.
func (v *View) BranchPath(id string) []*Entry {
	if v.s != nil {
		return v.s.BranchPath(id)
	}
	if id == "" {
		return v.ix.LeafBranch()
	}
	return v.ix.Branch(id)
}

// ResolveEntry returns the id of the entry name stands for, as
// Session.ResolveEntry.
func (v *View) ResolveEntry(name string) (string, error) {
	var id string
	var err error
	v.index(func(ix *tree.Index) { id, err = resolveEntry(ix, name) })
	return id, err
}

// Labels returns every label, as tree.Index.Labels.
func (v *View) Labels() []tree.LabelPair {
	var out []tree.LabelPair
	v.index(func(ix *tree.Index) { out = ix.Labels() })
	return out
}

// Name returns the session name, as Session.Name.
func (v *View) Name() (string, bool) {
	var name string
	var ok bool
	v.index(func(ix *tree.Index) { name, ok = ix.Name() })
	return name, ok
}

// Index gives f the view's tree, as Session.Index. f must not keep it nor
// change its entries.
func (v *View) Index(f func(ix *tree.Index)) { v.index(f) }

// viewChunk is the size of the pieces a View parses the file in (two are
// in memory: one parsed, the next read meanwhile); each is still parsed
// on every CPU (jsonl's parallel threshold).
const viewChunk = 4 << 20

// viewWindow bounds the bytes Lines reads at once (a longer line is read
// alone), and viewGap the unneeded bytes it reads between two lines
// rather than start another read.
const (
	viewWindow = 4 << 20
	viewGap    = 64 << 10
)

// Lines yields the entries es (from Entries or BranchPath, in file
// order) with their bytes, in the order given, reading the lines of the
// message entries back from the file, a window of about 4 MiB at a time,
// the next window while the caller works on this one. An entry yielded,
// and its bytes, are valid until the loop goes on to the next: what the
// caller keeps it copies. A line that is not the one parsed (its
// envelope differs: the file was rewritten since) ends the sequence with
// an error naming the file and line; so does a read that fails.
func (v *View) Lines(es []*Entry) iter.Seq2[*Entry, error] {
	return func(yield func(*Entry, error) bool) {
		if v.s != nil || v.f == nil {
			for _, e := range es {
				if !yield(e, nil) {
					return
				}
			}
			return
		}
		type window struct {
			entries []Entry
			buf     []byte
			err     error
		}
		// runs cuts es into windows: consecutive entries whose lines lie
		// close together in the file.
		next := 0
		cut := func() (int, int) {
			i := next
			if i >= len(es) {
				return i, i
			}
			j := i + 1
			if es[i].Detached() {
				start, n := es[i].Span()
				end := start + int64(n)
				for ; j < len(es); j++ {
					e := es[j]
					if !e.Detached() {
						continue
					}
					off, n := e.Span()
					if off < end || off-end > viewGap || off+int64(n)-start > viewWindow {
						break
					}
					end = off + int64(n)
				}
			}
			next = j
			return i, j
		}
		load := func(w *window, i, j int) {
			w.entries = w.entries[:0]
			w.err = nil
			var first, last int64 = -1, 0
			for _, e := range es[i:j] {
				if e.Detached() {
					off, n := e.Span()
					if first < 0 {
						first = off
					}
					last = off + int64(n)
				}
			}
			if first >= 0 {
				if int64(cap(w.buf)) < last-first {
					w.buf = make([]byte, last-first)
				}
				w.buf = w.buf[:last-first]
				if _, err := v.f.ReadAt(w.buf, first); err != nil {
					w.err = fmt.Errorf("read %s: %w", v.path, err)
					return
				}
			}
			for _, e := range es[i:j] {
				c := *e
				if c.Detached() {
					off, n := c.Span()
					if err := c.Fill(w.buf[off-first : off-first+int64(n) : off-first+int64(n)]); err != nil {
						w.err = fmt.Errorf("read %s: %w", v.path, err)
						return
					}
				}
				w.entries = append(w.entries, c)
			}
		}
		var cur, spare window
		i, j := cut()
		load(&cur, i, j)
		for i < len(es) {
			if cur.err != nil {
				yield(nil, cur.err)
				return
			}
			// The next window is read while this one is used.
			ni, nj := cut()
			done := make(chan struct{})
			go func() {
				defer close(done)
				load(&spare, ni, nj)
			}()
			for k := range cur.entries {
				if !yield(&cur.entries[k], nil) {
					<-done
					return
				}
			}
			<-done
			cur, spare = spare, cur
			i = ni
		}
	}
}
