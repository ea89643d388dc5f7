package engine

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// ForkedFile is the session file Store.ForkFile wrote.
type ForkedFile struct {
	Path   string // the new session file, absolute
	Header Header // its header
	// Leaf is the id of its leaf, its last entry; HasLeaf is false when
	// it has no entries or the last has no string id.
	Leaf    string
	HasLeaf bool
	Entries int // its entries, the header aside
}

// ForkFile writes the session file Fork would, with the same bytes for
// the same ids and clock, and returns what it wrote, without opening it:
// the source is read as a View and its lines are copied to the new file
// as they are read back, so that forking a session of a gigabyte holds a
// small part of it in memory (Fork returns the new session open, holding
// every entry). The new file is written under its writer lock, to a
// temporary file that is synced and renamed into place; the lock is
// released when ForkFile returns. A source that a View reads whole (a
// version 1 or 2 file, migrated in memory) is forked by Fork.
func (st *Store) ForkFile(ctx context.Context, source string, o ForkOptions) (*ForkedFile, error) {
	path, err := st.Resolve(ctx, source)
	if err != nil {
		return nil, err
	}
	v, err := openView(ctx, path, st.openOptions(OpenOptions{ReadOnly: true}))
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if v.s != nil {
		ns, err := st.Fork(ctx, path, o)
		if err != nil {
			return nil, err
		}
		out := &ForkedFile{Path: ns.SessionFile(), Header: ns.Header()}
		ns.Index(func(ix *tree.Index) { out.Entries = ix.Len() })
		out.Leaf, out.HasLeaf = ns.LeafID()
		ns.dropLock = true // as writeFork: no lock file stays
		return out, ns.Close()
	}
	if ver := migrate.VersionOf(&v.header); ver > CurrentVersion {
		// Copying entries of a format this code does not know under a
		// version 3 header would silently change their meaning.
		return nil, &VersionError{Path: v.path, Found: ver, Max: CurrentVersion}
	}
	h := jsonl.ParseHeader(v.header)
	cwd := o.Cwd
	if cwd == "" {
		// The source's cwd, as the header gives it, or the process's.
		cwd = processCwd()
		if h.HasCwd {
			cwd = h.Cwd
		}
	}
	dir := st.forkDir(v.path, cwd, o)
	opts := st.options()
	if !o.Branch && o.At == "" {
		// Every entry, in file order (pi's forkFrom), naming the source
		// as it was given.
		entries := v.ix.Entries()
		lines := func(yield func([]byte, error) bool) {
			for e, err := range v.Lines(entries) {
				if err != nil || !yield(e.Raw, nil) {
					if err != nil {
						yield(nil, err)
					}
					return
				}
			}
		}
		body := forkBody{lines: lines}
		if off, n, ok := contiguous(entries); ok {
			// The lines are the file's bytes from the first entry to the
			// last, one after another: the kernel copies them.
			body = forkBody{src: v.f, off: off, n: n, ends: [2]*Entry{entries[0], entries[len(entries)-1]}}
		}
		out, err := writeFork(ctx, opts, path, cwd, dir, body)
		if err != nil {
			return nil, fmt.Errorf("fork %s: %w", path, err)
		}
		out.Entries = len(entries)
		if n := len(entries); n > 0 && entries[n-1].IDKind == KindString {
			out.Leaf, out.HasLeaf = tree.Key(entries[n-1]), true
		}
		return out, nil
	}
	var leaf string
	if o.At != "" {
		if leaf, err = v.ResolveEntry(o.At); err != nil {
			return nil, fmt.Errorf("fork %s: %w", v.path, err)
		}
	} else {
		id, ok := v.LeafID()
		if !ok {
			return nil, fmt.Errorf("fork %s: the session has no entries to fork", v.path)
		}
		leaf = id
	}
	plan, err := planBranch(v.ix, leaf, v.path)
	if err != nil {
		return nil, err
	}
	// The new entries' ids: the path's, and the labels' drawn as the
	// session's appends draw them.
	ids := make(map[string]bool, len(plan.kept)+len(plan.labels))
	for _, e := range plan.kept {
		ids[tree.Key(e)] = true
	}
	ns := &Session{opts: opts}
	leafKey, leafKind := "", KindNull
	if n := len(plan.kept); n > 0 {
		if last := plan.kept[n-1]; last.IDKind == jsonl.KindAbsent {
			leafKind = jsonl.KindAbsent
		} else {
			leafKey, leafKind = tree.Key(last), KindString
		}
	}
	lines := func(yield func([]byte, error) bool) {
		i := 0
		for e, err := range v.Lines(plan.kept) {
			if err != nil {
				yield(nil, err)
				return
			}
			if parent, ok := plan.reparent[i]; ok {
				if e, err = withParent(e, parent); err != nil {
					yield(nil, err)
					return
				}
			}
			i++
			if !yield(e.Raw, nil) {
				return
			}
		}
		for _, l := range plan.labels {
			lid := entryID(ns.candidate(), newUUID, func(id string) bool { return ids[id] })
			ids[lid] = true
			line := l.line(lid, leafKey, leafKind)
			leafKey, leafKind = lid, KindString
			if !yield(line, nil) {
				return
			}
		}
	}
	// The copy's header names the source by its absolute path (the
	// session's file), as Fork's does.
	out, err := writeFork(ctx, opts, v.path, cwd, dir, forkBody{lines: lines})
	if err != nil {
		return nil, fmt.Errorf("fork branch: %w", err)
	}
	out.Entries = len(plan.kept) + len(plan.labels)
	out.Leaf, out.HasLeaf = leafKey, leafKind == KindString
	return out, nil
}

// forkDir is the directory of a fork of the file at path whose cwd is
// cwd: o.Dir, or with o.Cwd that cwd's directory in the store; else the
// source's directory when the source is in the store, and the store's
// directory for cwd when it is not (a fork goes into the store it was
// asked of, not beside a file elsewhere).
func (st *Store) forkDir(path, cwd string, o ForkOptions) string {
	switch {
	case o.Dir != "":
		return o.Dir
	case o.Cwd != "":
		return st.sessionDir(o.Cwd)
	case st.contains(path):
		return filepath.Dir(path)
	}
	return st.sessionDir(cwd)
}

// contains reports whether path lies below the store's directory.
func (st *Store) contains(path string) bool {
	rel, err := filepath.Rel(st.root, path)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// forkBody is what follows a fork's header: lines, or the n bytes at off
// of src, whole lines without the last one's newline.
type forkBody struct {
	lines  iter.Seq2[[]byte, error]
	src    vfs.File
	off, n int64
	// ends are the first and last entry of the range, checked in the
	// copy: a source rewritten in place since it was read (pi rewrites a
	// file it migrates) is not forked as entries it no longer holds.
	ends [2]*Entry
}

// contiguous returns the byte range of the file that holds the lines of
// es and nothing else: each line exactly an entry's bytes (no blank,
// damaged or padded line among them) and followed by the next. ok is
// false when they are not, or when an entry's place in the file is not
// known.
func contiguous(es []*Entry) (off, n int64, ok bool) {
	if len(es) == 0 {
		return 0, 0, false
	}
	var end int64
	for i, e := range es {
		o, l := e.Span()
		// A line kept in memory is exactly its entry's bytes when it is
		// as long as they are: no blank text around the object.
		if l <= 0 || (e.Raw != nil && len(e.Raw) != l) {
			return 0, 0, false
		}
		if i == 0 {
			off = o
		} else if o != end+1 {
			return 0, 0, false
		}
		end = o + int64(l)
	}
	return off, end - off, true
}

// writeFork writes a new session file for cwd in dir: a header naming
// parent as its parentSession, then body. It takes the new file's lock,
// writes a temporary file, syncs and renames it into place and syncs the
// directory, then releases the lock and removes its lock file (a fork is
// not open: no lock stays beside it); on an error nothing is left behind.
func writeFork(ctx context.Context, opts options, parent, cwd, dir string, body forkBody) (_ *ForkedFile, err error) {
	opts.ReadOnly, opts.Dir = false, dir
	if dir, err = opts.sessionDir(); err != nil {
		return nil, err
	}
	id := opts.sessionID()
	if err := layout.CheckName(id); err != nil {
		return nil, err
	}
	now := opts.now()
	header := jsonl.NewHeaderLine(id, now, cwd, &parent)
	file := filepath.Join(dir, layout.SessionFileName(now, id))
	fsys := opts.fs()
	lk, err := acquire(ctx, file, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Remove keeps a lock file that is no longer this lock's, and
		// one another process has open (Windows).
		if _, lerr := lk.Remove(); err == nil {
			err = lerr
		}
	}()
	if _, err := fsys.Lstat(file); err == nil {
		return nil, fmt.Errorf("create session file %s: %w", file, fs.ErrExist)
	}
	if err := vfs.MkdirAllSync(fsys, dir, vfs.DirMode); err != nil {
		return nil, fmt.Errorf("create session file %s: %w", file, err)
	}
	tmp := vfs.TempName(file)
	// Read and write: a copied range is read back to be checked.
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", file, err)
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	if d, derr := fsys.Stat(dir); derr == nil {
		// Owned like its directory (when root writes in a user's store).
		if err = vfs.OwnLike(f, d); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("create session file %s: %w", file, err)
		}
	}
	if err = writeForkBody(f, header, body); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", tmp, err)
	}
	if err = fsys.Rename(tmp, file); err != nil {
		return nil, fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err = fsys.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("sync directory %s: %w", dir, err)
	}
	h, _ := jsonl.ParseEntry(header)
	return &ForkedFile{Path: file, Header: jsonl.ParseHeader(h)}, nil
}

// writeForkBody writes header and body to f, a new empty file, each line
// followed by a newline.
func writeForkBody(f vfs.File, header []byte, body forkBody) error {
	w := bufio.NewWriterSize(f, 1<<16)
	w.Write(header)
	w.WriteByte('\n')
	if body.src != nil {
		if err := w.Flush(); err != nil {
			return err
		}
		at := int64(len(header) + 1)
		if _, err := vfs.CopyRange(f, at, body.src, body.off, body.n); err != nil {
			return err
		}
		for _, e := range body.ends {
			o, l := e.Span()
			line := make([]byte, l)
			if _, err := f.ReadAt(line, at+o-body.off); err != nil {
				return err
			}
			got, err := jsonl.ParseEntry(line)
			if err != nil || got.Type != e.Type || got.ID != e.ID || got.ParentID != e.ParentID {
				return fmt.Errorf("line %d changed since it was read: %w", e.Line, ErrStale)
			}
		}
		w.WriteByte('\n')
		return w.Flush()
	}
	for line, err := range body.lines {
		if err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	return w.Flush()
}
