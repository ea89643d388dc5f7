package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// DefaultChunk is the read size of ParseReader when none is given.
const DefaultChunk = 8 << 20

// ParseReader is ParseFile over the bytes of r, for a file too large to
// hold: it reads r in pieces of about chunk bytes (DefaultChunk when
// chunk <= 0) and parses each as it arrives, so that at most a piece
// (or one line longer than it) is in memory at a time. Its result is
// ParseFile's for the same bytes (the same entries, offsets, line
// numbers, malformed lines, line count and tail), except that no entry
// shares the memory of what was read:
//
//   - an entry for which keep returns true gets a copy of its bytes;
//   - any other is detached: its Raw is nil, and everything else (the
//     envelope, HasMessage, offset, line) is kept; Fill gives it its
//     bytes again, read back from the file. Only lines without blank
//     text around their object are detached, so a detached entry's
//     Span is exactly its bytes.
//
// keep nil keeps every entry. A read error is returned as it is, with
// what was parsed before it.
func ParseReader(r io.Reader, chunk int, keep func(*Entry) bool) (*Parsed, error) {
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	p := &Parsed{}
	size := sizeOf(r)
	buf := make([]byte, 0, chunk)
	var (
		spare []byte // the next piece, read while this one is parsed
		base  int64  // file offset of buf[0]
		line  = 1    // line number of buf[0]
		start = -1   // where parsing resumes in buf; -1 until the file's leading blank text is passed
		eof   bool
	)
	res := readInto(r, buf)
	for {
		buf = buf[:len(buf)+res.n]
		switch {
		case res.err == io.EOF || res.err == io.ErrUnexpectedEOF:
			eof = true
		case res.err != nil:
			p.Size = base + int64(len(buf))
			return p, res.err
		}
		if start < 0 {
			// JavaScript's trim of the whole text: the first line starts
			// after the leading blank text (a byte-order mark, say).
			s, e := jsTrimBounds(buf)
			if (s >= e || s > len(buf)-utf8.UTFMax) && !eof {
				// All blank so far, or a character may be cut.
				buf = withRoom(buf)
				res = readInto(r, buf)
				continue
			}
			start = s
		}
		if eof {
			break
		}
		cut := safeCut(buf, start)
		if cut <= start {
			// No line is known not to be the last one.
			buf = withRoom(buf)
			res = readInto(r, buf)
			continue
		}
		// The rest starts the next piece, whose reading goes on while
		// this one is parsed.
		if cap(spare) < cap(buf) {
			spare = make([]byte, 0, cap(buf))
		}
		spare = append(spare[:0], buf[cut:]...)
		done := make(chan readResult, 1)
		go func(b []byte) { done <- readInto(r, b) }(spare)
		// The parse counts the newlines of its range: no other pass.
		lead := bytes.Count(buf[:start], []byte{'\n'}) // leading blank text, before the first piece only
		newlines := p.addRange(buf, base, start, cut, line+lead, keep)
		if base == 0 && size > 0 {
			// The entries of the whole file, guessed from the first
			// piece's: room for them all at once, not grown step by step.
			want := int(float64(len(p.Entries)) * float64(size) / float64(cut) * 1.05)
			if more := want - len(p.Entries); more > 0 {
				p.Entries = slices.Grow(p.Entries, more)
			}
		}
		line += lead + newlines
		p.Lines += lead + newlines
		base += int64(cut)
		res = <-done
		buf, spare = spare, buf
		start = 0
	}
	// The last piece: its text ends where JavaScript's trim ends it.
	p.Size = base + int64(len(buf))
	s, e := jsTrimBounds(buf)
	if start < 0 {
		start = s
	}
	if start < e {
		p.addRange(buf, base, start, e, line+bytes.Count(buf[:start], []byte{'\n'}), keep)
	}
	p.Lines += bytes.Count(buf, []byte{'\n'})
	p.finish(buf, base, s, e)
	return p, nil
}

// readResult is what a read into a buffer's room gave.
type readResult struct {
	n   int
	err error
}

// readInto reads from r into the room of b (b[len(b):cap(b)]) until it is
// full or r ends.
func readInto(r io.Reader, b []byte) readResult {
	n, err := io.ReadFull(r, b[len(b):cap(b)])
	return readResult{n, err}
}

// withRoom returns b, grown when it is full: one line (or leading blank
// text) is longer than the room.
func withRoom(b []byte) []byte {
	if len(b) < cap(b) {
		return b
	}
	return append(b, make([]byte, cap(b))...)[:len(b)]
}

// safeCut returns the end of the lines of buf[start:] that are followed by
// a non-blank line, which JavaScript's trim of the whole text cannot
// change: a line is cut from its trailing blank text only when it is the
// last non-blank one. It returns start when there is none.
func safeCut(buf []byte, start int) int {
	lastNL := bytes.LastIndexByte(buf[start:], '\n')
	if lastNL < 0 {
		return start
	}
	cut := start + lastNL + 1
	for _, c := range buf[cut:] {
		if c < utf8.RuneSelf && !IsJSWhitespace(rune(c)) {
			return cut // the unfinished line is not blank
		}
	}
	// Keep back the last non-blank complete line and what follows it.
	end := cut - 1
	for end > start {
		ls := bytes.LastIndexByte(buf[start:end], '\n') + 1 + start
		if !JSBlank(buf[ls:end]) {
			return ls
		}
		end = ls - 1
	}
	return cut // only blank lines: they are skipped wherever they are
}

// addRange parses the lines of buf[s:e] (the first is line number first)
// and appends their entries to p, at file offsets base+, copied or
// detached as keep says, and their malformed lines. It returns the
// number of newlines in buf[s:e].
func (p *Parsed) addRange(buf []byte, base int64, s, e, first int, keep func(*Entry) bool) int {
	from := len(p.Entries)
	var bad []BadLine
	var newlines int
	p.Entries, bad, _, newlines = parseRange(p.Entries, buf, s, e, first, true, false)
	entries := p.Entries[from:]
	// The timestamps share buf's memory: one copy of them all, not one
	// allocation per entry.
	size := 0
	for i := range entries {
		size += len(entries[i].Timestamp)
	}
	arena := make([]byte, 0, size)
	for i := range entries {
		if ts := entries[i].Timestamp; ts != "" {
			at := len(arena)
			arena = append(arena, ts...)
			entries[i].Timestamp = unsafe.String(&arena[at], len(ts))
		}
	}
	for i := range entries {
		ent := &entries[i]
		ent.Offset += base
		// A line with blank text around its object stays attached: a
		// detached entry's line is exactly its bytes.
		if keep == nil || keep(ent) || int(ent.segLen) != len(ent.Raw) {
			ent.Raw = bytes.Clone(ent.Raw)
		} else {
			ent.Raw = nil
		}
	}
	for i := range bad {
		bad[i].Offset += base
	}
	p.Malformed = append(p.Malformed, bad...)
	return newlines
}

// sizeOf returns the size of r when it is a file that can tell (it has
// Stat), or 0.
func sizeOf(r io.Reader) int64 {
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

// Detached reports whether the entry was parsed without keeping its
// bytes (see ParseReader): Raw is nil until Fill.
func (e *Entry) Detached() bool { return e.Raw == nil && e.segLen > 0 }

// Span returns where a detached entry's line lies in its file: the
// bytes that Fill expects.
func (e *Entry) Span() (off int64, n int) { return e.Offset, int(e.segLen) }

// ErrChanged is returned by Fill when the bytes given are not the line
// the entry was parsed from.
var ErrChanged = errors.New("the line is not the one that was read")

// Fill gives a detached entry its bytes again: line must be the text
// Span locates, read back from the file. It is parsed again, and the
// entry keeps it only when its envelope is the one parsed before;
// otherwise (the file changed since) Fill returns an error wrapping
// ErrChanged and leaves the entry detached.
func (e *Entry) Fill(line []byte) error {
	if !e.Detached() {
		return nil
	}
	if len(line) != int(e.segLen) {
		return fmt.Errorf("line %d: %w (length %d, not %d)", e.Line, ErrChanged, len(line), e.segLen)
	}
	got, err := parseEntry(line, copyStrings, nil)
	if err != nil {
		return fmt.Errorf("line %d: %w: %v", e.Line, ErrChanged, err)
	}
	if !sameEnvelope(&got, e) {
		return fmt.Errorf("line %d: %w (its envelope differs)", e.Line, ErrChanged)
	}
	e.Raw = got.Raw
	return nil
}

// sameEnvelope reports whether two parses of a line decoded the same
// envelope.
func sameEnvelope(a, b *Entry) bool {
	return a.Type == b.Type && a.ID == b.ID && a.IDKind == b.IDKind &&
		a.ParentID == b.ParentID && a.ParentKind == b.ParentKind &&
		a.Timestamp == b.Timestamp && a.Role == b.Role &&
		a.msgStart == b.msgStart && a.msgEnd == b.msgEnd
}
