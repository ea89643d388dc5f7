package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// What a Session hands out shares no memory a caller can change with the
// session: entries are copies whose Raw is their own. Their strings (ids,
// timestamps) may point into the bytes the session read, which are never
// written after they were read, so they stay what they were.

// copyEntry returns a copy of e with its own Raw.
func copyEntry(e *Entry) *Entry {
	if e == nil {
		return nil
	}
	c := *e
	c.Raw = bytes.Clone(e.Raw)
	return &c
}

// copyEntries copies entries with two allocations: one for the entries,
// one for all their bytes.
func copyEntries(es []*Entry) []*Entry {
	if es == nil {
		return nil
	}
	n := 0
	for _, e := range es {
		n += len(e.Raw)
	}
	buf := make([]byte, 0, n)
	vals := make([]Entry, len(es))
	out := make([]*Entry, len(es))
	for i, e := range es {
		vals[i] = *e
		if e.Raw != nil { // nil: a detached entry (View) stays detached
			start := len(buf)
			buf = append(buf, e.Raw...)
			vals[i].Raw = buf[start:len(buf):len(buf)]
		}
		out[i] = &vals[i]
	}
	return out
}

// copyContext returns c with copies of its messages' bytes and entries (a
// stored message's bytes are its copied entry's).
func copyContext(c compaction.Context) compaction.Context {
	out := compaction.Context{ThinkingLevel: bytes.Clone(c.ThinkingLevel), Model: bytes.Clone(c.Model)}
	if c.Messages == nil {
		return out
	}
	entries := make([]*Entry, 0, len(c.Messages))
	for _, m := range c.Messages {
		if m.Entry != nil {
			entries = append(entries, m.Entry)
		}
	}
	copies := copyEntries(entries)
	out.Messages = make([]compaction.Message, len(c.Messages))
	k := 0
	for i, m := range c.Messages {
		nm := compaction.Message{Stored: m.Stored}
		if m.Entry != nil {
			nm.Entry = copies[k]
			k++
		}
		if m.Stored && nm.Entry != nil {
			nm.Raw = nm.Entry.Message()
		} else {
			nm.Raw = m.Raw // built for this context; shared with nothing
		}
		out.Messages[i] = nm
	}
	return out
}

// copyTree replaces the entries of a freshly built tree by copies.
func copyTree(roots []*tree.Node) []*tree.Node {
	tree.Walk(roots, func(n *tree.Node, _ int) bool {
		n.Entry = copyEntry(n.Entry)
		return true
	}, nil)
	return roots
}

// sessionsIn is Store.Sessions of one directory, in file name order.
func sessionsIn(ctx context.Context, fsys vfs.FS, dir string) iter.Seq2[*Info, error] {
	return func(yield func(*Info, error) bool) {
		files, err := sessionFiles(fsys, dir, false)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				yield(nil, fmt.Errorf("list %s: %w", dir, err))
			}
			return
		}
		var buf []byte
		var b infoBuilder
		yieldDir(ctx, fsys, files, &buf, &b, yield)
	}
}

// allSessions is Store.Sessions of every cwd: the per-cwd directories of
// an agent's store, every directory of a store opened on a Dir.
func (st *Store) allSessions(ctx context.Context) iter.Seq2[*Info, error] {
	return func(yield func(*Info, error) bool) {
		fsys := st.fs()
		var dirs []dirFiles
		if st.agentDir != "" {
			ents, err := fsys.ReadDir(st.root)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					yield(nil, fmt.Errorf("list %s: %w", st.root, err))
				}
				return
			}
			for _, d := range ents {
				if d.Type()&fs.ModeSymlink != 0 || !d.IsDir() {
					continue
				}
				dir := filepath.Join(st.root, d.Name())
				files, err := sessionFiles(fsys, dir, false)
				if err != nil {
					if !yield(nil, readDirError(dir, err)) {
						return
					}
					continue
				}
				dirs = append(dirs, files)
			}
		} else {
			found, skipped, err := walkStore(ctx, st.root, func(dir string) (dirFiles, error) {
				return sessionFiles(fsys, dir, false)
			})
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					yield(nil, fmt.Errorf("list %s: %w", st.root, err))
				}
				return
			}
			for _, err := range skipped {
				// The special files are given with their directory's
				// files; the directories that could not be read first.
				if !errors.Is(err, vfs.ErrNotRegular) && !yield(nil, err) {
					return
				}
			}
			dirs = found
		}
		var buf []byte
		var b infoBuilder
		for _, d := range dirs {
			if !yieldDir(ctx, fsys, d, &buf, &b, yield) {
				return
			}
		}
	}
}

// yieldDir yields the infos of one directory's session files, and its
// special files as errors; it returns false when the iteration ended.
func yieldDir(ctx context.Context, fsys vfs.FS, d dirFiles, buf *[]byte, b *infoBuilder, yield func(*Info, error) bool) bool {
	for _, name := range d.names {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return false
		}
		p := filepath.Join(d.dir, name)
		in, err := readInfoBuf(fsys, p, buf, b, false)
		switch {
		case errors.Is(err, errNotSession):
			continue
		case err != nil:
			if !yield(nil, fmt.Errorf("list %s: %w", p, err)) {
				return false
			}
			continue
		}
		if !yield(in, nil) {
			return false
		}
	}
	for _, name := range d.special {
		if !yield(nil, &fs.PathError{Op: "open", Path: filepath.Join(d.dir, name), Err: vfs.ErrNotRegular}) {
			return false
		}
	}
	return true
}
