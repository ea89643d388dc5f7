package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// followInterval is how often Follow looks at the session file when no
// interval is given: one stat (and a read of what was appended) every
// 200 ms. sessctl polls instead of using file notifications, which are
// not available on every filesystem (network mounts) and system sessctl
// builds for, and would need a dependency; a poll of an unchanged file
// costs one stat.
const followInterval = 200 * time.Millisecond

// Refresh brings a session opened read-only up to date with its file:
// the complete lines appended since it was read (or last refreshed) are
// read from where the last complete line ended, and indexed as a reload
// would (the leaf moves to the new last entry unless Branch or ResetLeaf
// moved it). A last line without its newline is left for a later
// Refresh, unless it is a complete entry (pi reads those too). It returns
// the new entries, in file order; none when nothing was appended.
//
// A file that was replaced, shrank or was rewritten before its end, and a
// version 1 or 2 file (migrated in memory), are read again whole; the
// entries returned are then those beyond the number held before. A file
// that was removed is an error matching ErrVanished. A session that did
// not exist when it was opened is read once its file appears.
//
// A session open for writing already reads what other processes appended
// before each of its writes; Refresh does nothing for it, nor for a
// session in memory.
func (s *Session) Refresh() ([]*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if !s.opts.ReadOnly || !s.persist || s.file == "" {
		return nil, nil
	}
	before := s.ix.Len()
	fsys := s.opts.fs()
	f, err := fsys.OpenFile(s.file, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if !s.onDisk {
				return nil, nil
			}
			return nil, fmt.Errorf("refresh %s: %w", s.file, ErrVanished)
		}
		return nil, fmt.Errorf("refresh %s: %w", s.file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("refresh %s: %w", s.file, err)
	}
	d := &s.disk
	known := d.end + int64(len(d.tail))
	switch {
	case !s.onDisk || !d.loaded || d.migrateFrom != 0 || (d.ident != nil && !vfs.SameFile(st, d.ident)) || st.Size() < known:
		return s.refreshWhole(before)
	case st.Size() == known:
		return nil, nil
	}
	buf := make([]byte, st.Size()-d.end)
	n, err := f.ReadAt(buf, d.end)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("refresh %s: %w", s.file, err)
	}
	buf = buf[:n]
	if !bytes.HasPrefix(buf, d.tail) {
		return s.refreshWhole(before)
	}
	complete := bytes.LastIndexByte(buf, '\n') + 1
	seg := 0
	if d.tailEntry {
		if complete == 0 {
			// The indexed unterminated last line grew without ending.
			return s.refreshWhole(before)
		}
		i := bytes.IndexByte(buf, '\n')
		if !jsonl.JSBlank(buf[len(d.tail):i]) {
			return s.refreshWhole(before)
		}
		seg = i + 1
		d.lines++
	}
	leaf, kind := s.ix.Leaf()
	lines := d.lines
	if seg < complete {
		s.indexLines(buf[seg:complete], d.end+int64(seg), lines)
		lines += bytes.Count(buf[seg:complete], []byte{'\n'})
	}
	d.end += int64(complete)
	d.lines = lines
	d.tail = bytes.Clone(buf[complete:])
	d.tailEntry = false
	if len(d.tail) > 0 && !jsonl.JSBlank(d.tail) {
		if e, err := jsonl.ParseEntry(d.tail); err == nil {
			e.Offset, e.Line = d.end, d.lines+1
			if !e.IsHeader() {
				s.addEntry(e)
			}
			d.tailEntry = true
		}
	}
	if s.ix.Len() > before {
		s.gen++
		if s.leafMoved {
			s.ix.SetLeaf(leaf, kind)
		}
	}
	return s.since(before), nil
}

// refreshWhole reads the file again and returns the entries beyond the
// first before.
func (s *Session) refreshWhole(before int) ([]*Entry, error) {
	s.gen++
	s.leafMoved = false
	if err := s.load(context.Background()); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	return s.since(before), nil
}

func (s *Session) since(before int) []*Entry {
	all := s.ix.Entries()
	if len(all) <= before {
		return nil
	}
	return copyEntries(all[before:])
}

// Follow returns an iterator over the entries appended to the session
// file from now on, as another process (an agent, pi) writes them: it
// calls Refresh every interval (200 ms when 0 or less) and yields
// each new entry. It ends when ctx is done (without an error) or the
// caller stops, and after yielding a Refresh error. The session must be
// open read-only; a session open for writing or in memory yields nothing
// until ctx is done.
func (s *Session) Follow(ctx context.Context, interval time.Duration) iter.Seq2[*Entry, error] {
	if interval <= 0 {
		interval = followInterval
	}
	return func(yield func(*Entry, error) bool) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			news, err := s.Refresh()
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range news {
				if !yield(e, nil) {
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}
