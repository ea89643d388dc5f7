package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// Tail is the end of a session file, read backwards from its end: its
// last entries, and what is appended after them (Follow). Reading it
// costs the lines it gives, not the file: the last two entries of a
// 150 MB session are two lines read, and a 50 MB last entry is read
// once. Store.Tail makes one.
type Tail struct {
	path    string
	opts    options
	header  Entry
	entries []*Entry

	// Following, as Session.Refresh does for a whole session: the file
	// read, the offset after its last complete line, and the bytes after
	// it as a length and checksum (an unfinished line is not kept: it
	// may be large, and it is read again once complete).
	ident     fs.FileInfo
	end       int64
	tailLen   int64
	tailSum   uint32
	tailEntry bool   // the bytes after end are a complete entry, given already
	last      string // the key of the last entry given, when given is set
	given     bool

	// s is the whole session, read instead where the end alone will not
	// do: a file that is not a plain version 3 session (migrated in
	// memory, a header after blank lines, a damaged header: Open's
	// result and errors), or one replaced or rewritten while followed.
	s *Session
}

// tailScratch is the size of the reads that look for line ends.
const tailScratch = 64 << 10

// openTail is Store.Tail of the file at path, with opts as for a
// read-only open.
func openTail(ctx context.Context, path string, n int, opts options) (*Tail, error) {
	opts.ReadOnly = true
	t := &Tail{path: path, opts: opts}
	if n < 0 {
		n = 0
	}
	ok, err := t.readEnd(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		s, err := open(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		t.s = s
		t.header = s.Header().Entry
		t.path = s.SessionFile()
		s.mu.Lock()
		all := s.ix.Entries()
		t.entries = copyEntries(all[max(0, len(all)-n):])
		s.mu.Unlock()
	}
	if k := len(t.entries); k > 0 {
		t.last, t.given = tree.Key(t.entries[k-1]), true
	}
	return t, nil
}

// Header returns the session header.
func (t *Tail) Header() Header { return jsonl.ParseHeader(*copyEntry(&t.header)) }

// Entries returns the last entries read by Store.Tail, in file order.
func (t *Tail) Entries() []*Entry { return t.entries }

// SessionFile returns the file's absolute path.
func (t *Tail) SessionFile() string { return t.path }

// Close releases the whole session read instead, if any.
func (t *Tail) Close() error {
	if t.s != nil {
		return t.s.Close()
	}
	return nil
}

// readEnd reads the header and the last n entries of a plain version 3
// file, and the state Follow starts from. ok is false when the file is
// not one (see Store.Tail).
func (t *Tail) readEnd(n int) (ok bool, err error) {
	fsys := t.opts.fs()
	abs, err := filepath.Abs(t.path)
	if err != nil {
		return false, nil
	}
	t.path = abs
	f, err := fsys.OpenFile(abs, os.O_RDONLY, 0)
	if err != nil {
		return false, nil // Open says what is wrong
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("tail %s: %w", abs, err)
	}
	size := st.Size()
	// The header: the first line, as it is.
	head := make([]byte, min(size, tailScratch))
	if k, err := f.ReadAt(head, 0); k < len(head) {
		return false, fmt.Errorf("tail %s: %w", abs, orEOF(err))
	}
	nl := bytes.IndexByte(head, '\n')
	if nl < 0 || len(head) == 0 || head[0] != '{' {
		return false, nil
	}
	h, err := jsonl.ParseEntry(head[:nl])
	if err != nil || !h.IsHeader() || h.IDKind != KindString || migrate.VersionOf(&h) != jsonl.CurrentVersion {
		return false, nil
	}
	h.Raw = bytes.Clone(h.Raw)
	h.Line = 1
	t.header = h
	headerEnd := int64(nl) + 1

	// The lines after it, from the last backwards: [start, stop), ended
	// by a '\n' at stop except for the last one.
	var got []*Entry // last first
	scratch := make([]byte, tailScratch)
	stop := size
	first := true
	for stop >= headerEnd && (len(got) < n || first) {
		start, err := lineStart(f, scratch, headerEnd, stop)
		if err != nil {
			return false, fmt.Errorf("tail %s: %w", abs, err)
		}
		terminated := stop < size
		e, err := readLineEntry(f, scratch, start, stop, terminated)
		if err != nil {
			return false, fmt.Errorf("tail %s: %w", abs, err)
		}
		if first {
			// What follows the last '\n': Follow starts after it when it
			// is an unfinished line, and skips it when it is an entry.
			first = false
			t.end = start
			t.tailLen = stop - start
			if t.tailSum, err = sumRange(f, scratch, start, stop); err != nil {
				return false, fmt.Errorf("tail %s: %w", abs, err)
			}
			t.tailEntry = e != nil
		}
		if e != nil && len(got) < n {
			got = append(got, e)
		}
		stop = start - 1
	}
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	t.entries = got
	t.ident = st
	return true, nil
}

// lineStart returns where the line that ends at stop begins: just after
// the last '\n' in [lo, stop), or lo. It reads backwards through scratch.
func lineStart(f vfs.File, scratch []byte, lo, stop int64) (int64, error) {
	hi := stop
	for hi > lo {
		k := min(int64(len(scratch)), hi-lo)
		buf := scratch[:k]
		if n, err := f.ReadAt(buf, hi-k); n < len(buf) {
			return 0, orEOF(err)
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return hi - k + int64(i) + 1, nil
		}
		hi -= k
	}
	return lo, nil
}

// readLineEntry returns the entry of the line [start, stop) as a whole
// file's parse reads it (ParseFile), or nil for a line that is blank, not
// an entry, or a header. The last line of the file (not terminated) is
// read after JavaScript's trim of the file's end, as ParseFile does, so
// that an unfinished line is not an entry and a complete one is. A long
// line that cannot be a JSON object is judged by its first bytes,
// without reading it whole.
func readLineEntry(f vfs.File, scratch []byte, start, stop int64, terminated bool) (*Entry, error) {
	n := stop - start
	if n == 0 {
		return nil, nil
	}
	if n > int64(len(scratch)) {
		head := scratch
		if k, err := f.ReadAt(head, start); k < len(head) {
			return nil, orEOF(err)
		}
		if b := bytes.TrimLeft(head, " \t\r"); len(b) > 0 && b[0] != '{' {
			return nil, nil
		}
		if !terminated {
			// A line still being written (pi's, say) does not end in
			// '}': not an entry yet, and not read.
			if k, err := f.ReadAt(scratch, stop-int64(len(scratch))); k < len(scratch) {
				return nil, orEOF(err)
			}
			if b := trimRightJS(scratch); len(b) > 0 && b[len(b)-1] != '}' {
				return nil, nil
			}
		}
	}
	line := make([]byte, n)
	if k, err := f.ReadAt(line, start); k < len(line) {
		return nil, orEOF(err)
	}
	if !terminated {
		line = trimRightJS(line)
	}
	if jsonl.JSBlank(line) {
		return nil, nil
	}
	e, err := jsonl.ParseEntry(line)
	if err != nil || e.IsHeader() {
		return nil, nil
	}
	e.Offset = start
	e.Line = 0
	return &e, nil
}

// trimRightJS cuts JavaScript whitespace and line terminators off the end
// of b (the end half of String.prototype.trim).
func trimRightJS(b []byte) []byte {
	for len(b) > 0 {
		if c := b[len(b)-1]; c < utf8.RuneSelf {
			if !jsonl.IsJSWhitespace(rune(c)) {
				break
			}
			b = b[:len(b)-1]
			continue
		}
		r, n := utf8.DecodeLastRune(b)
		if !jsonl.IsJSWhitespace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}

// sumRange returns the checksum of the bytes [start, stop).
func sumRange(f vfs.File, scratch []byte, start, stop int64) (uint32, error) {
	var sum uint32
	for start < stop {
		k := min(int64(len(scratch)), stop-start)
		if n, err := f.ReadAt(scratch[:k], start); int64(n) < k {
			return 0, orEOF(err)
		}
		sum = crc32.Update(sum, crc32.IEEETable, scratch[:k])
		start += k
	}
	return sum, nil
}

// orEOF is err, or io.ErrUnexpectedEOF for a read that came up short
// without one: the file shrank while it was read.
func orEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Follow returns an iterator over the entries appended to the file after
// those Store.Tail read, as Session.Follow does for a whole session: it
// looks every interval (200 ms when 0 or less), reads only what
// was appended, and yields each new entry once its line is complete. It
// ends when ctx is done (without an error) or the caller stops, and
// after yielding an error: ErrVanished (wrapped) when the file was
// removed. A file replaced or rewritten before its end is read again
// whole, and the entries after the last one given are yielded (none
// when it is not there).
func (t *Tail) Follow(ctx context.Context, interval time.Duration) iter.Seq2[*Entry, error] {
	if interval <= 0 {
		interval = followInterval
	}
	return func(yield func(*Entry, error) bool) {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			news, err := t.refresh(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range news {
				t.last, t.given = tree.Key(e), true
				if !yield(e, nil) {
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}
}

// refresh returns the entries appended since the last look.
func (t *Tail) refresh(ctx context.Context) ([]*Entry, error) {
	if t.s != nil {
		return t.s.Refresh()
	}
	fsys := t.opts.fs()
	f, err := fsys.OpenFile(t.path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("refresh %s: %w", t.path, ErrVanished)
		}
		return nil, fmt.Errorf("refresh %s: %w", t.path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("refresh %s: %w", t.path, err)
	}
	known := t.end + t.tailLen
	switch {
	case !vfs.SameFile(st, t.ident) || st.Size() < known:
		return t.whole(ctx)
	case st.Size() == known:
		return nil, nil
	}
	buf := make([]byte, st.Size()-t.end)
	n, err := f.ReadAt(buf, t.end)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("refresh %s: %w", t.path, err)
	}
	buf = buf[:n]
	if int64(len(buf)) < t.tailLen || crc32.ChecksumIEEE(buf[:t.tailLen]) != t.tailSum {
		return t.whole(ctx)
	}
	complete := bytes.LastIndexByte(buf, '\n') + 1
	seg := 0
	if t.tailEntry {
		if complete == 0 {
			return t.whole(ctx)
		}
		i := bytes.IndexByte(buf, '\n')
		if !jsonl.JSBlank(buf[t.tailLen:i]) {
			return t.whole(ctx)
		}
		seg = i + 1
	}
	var news []*Entry
	p := jsonl.ParseFile(buf[seg:complete])
	for i := range p.Entries {
		if e := p.Entries[i]; !e.IsHeader() {
			e.Offset += t.end + int64(seg)
			e.Line = 0
			news = append(news, &e)
		}
	}
	t.end += int64(complete)
	rest := buf[complete:]
	t.tailLen, t.tailSum, t.tailEntry = int64(len(rest)), crc32.ChecksumIEEE(rest), false
	if len(rest) > 0 && !jsonl.JSBlank(rest) {
		if e, err := jsonl.ParseEntry(rest); err == nil {
			t.tailEntry = true
			if !e.IsHeader() {
				e.Offset, e.Line = t.end, 0
				news = append(news, &e)
			}
		}
	}
	return copyEntries(news), nil
}

// whole reads a file that was replaced or rewritten again, whole, and
// returns the entries after the last one given; it is followed as a
// whole session from then on.
func (t *Tail) whole(ctx context.Context) ([]*Entry, error) {
	s, err := open(ctx, t.path, t.opts)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	t.s = s
	if !s.onDisk {
		return nil, fmt.Errorf("refresh %s: %w", t.path, ErrVanished)
	}
	if !t.given {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.ix.Entries()
	for i := len(all) - 1; i >= 0; i-- {
		if tree.Key(all[i]) == t.last {
			return copyEntries(all[i+1:]), nil
		}
	}
	return nil, nil
}
