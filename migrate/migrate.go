package migrate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessctl/sessctl/layout"
)

// VersionOf returns the version pi sees in a header: the version member
// coerced to a number the way JavaScript's "<" does, 1 when it is absent or
// null, NaN when it is not a number at all (pi then migrates nothing).
func VersionOf(h *layout.Entry) float64 {
	v, ok := h.Field("version")
	if !ok {
		return 1
	}
	switch layout.KindOf(v) {
	case layout.KindNull:
		return 1
	case layout.KindNumber:
		f, _ := layout.Number(v)
		return f
	case layout.KindBool:
		if v[0] == 't' {
			return 1
		}
		return 0
	case layout.KindString:
		s, _ := layout.String(v)
		s = strings.TrimSpace(s)
		if s == "" {
			return 0
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// Needed reports whether a file whose first header has version v is
// migrated (pi: version < 3).
func Needed(v float64) bool { return v < layout.CurrentVersion }

// Result says what a migration did.
type Result struct {
	From      float64 // the version found (1 when the header had none)
	To        int     // the version written (3), or From's integer when nothing ran
	Migrated  bool    // at least one step ran
	Entries   int     // entries written, headers excluded
	Malformed int     // non-blank lines that were not JSON objects and were dropped
	Torn      bool    // the last line was an unterminated fragment (dropped, counted in Malformed)
}

// runner applies the step chain to one file, line by line.
type runner struct {
	st    *State
	steps []Step
	index int
}

func newRunner(sessionID string, version float64) *runner {
	r := &runner{st: NewState(sessionID)}
	for _, s := range Steps {
		if version < float64(s.To) {
			r.steps = append(r.steps, s)
		}
	}
	return r
}

// apply migrates one parsed line and returns its new JSON bytes.
func (r *runner) apply(e *layout.Entry) ([]byte, error) {
	if out, ok := r.fast(e); ok {
		r.index++
		return out, nil
	}
	rec, err := ParseRecord(e.Raw)
	if err != nil {
		return nil, err
	}
	for _, s := range r.steps {
		s.Apply(r.st, r.index, rec)
	}
	r.index++
	return rec.AppendJSON(nil), nil
}

// fast handles the lines that make up nearly every file without decoding
// them: an entry that the steps change only by adding id and parentId (v1)
// or not at all (v2), already written as JSON.stringify writes it. The
// result is byte for byte what the general path gives.
func (r *runner) fast(e *layout.Entry) ([]byte, bool) {
	if e.IsHeader() || e.Type == layout.TypeCompaction || e.Role == "hookMessage" ||
		(e.Type == layout.TypeMessage && e.Message() == nil) || !layout.IsCanonical(e.Raw) {
		return nil, false
	}
	if len(r.steps) == 0 || r.steps[0].From != 1 {
		return bytes.Clone(e.Raw), true // v2 -> v3 changes nothing here
	}
	if e.IDKind != layout.KindAbsent || e.ParentKind != layout.KindAbsent {
		return nil, false // the step overwrites in place: general path
	}
	id := r.st.EntryID(r.index)
	out := make([]byte, 0, len(e.Raw)+40)
	out = append(out, e.Raw[:len(e.Raw)-1]...)
	if len(e.Raw) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"id":`...)
	out = layout.AppendString(out, id)
	out = append(out, `,"parentId":`...)
	if r.st.hasPrev {
		out = layout.AppendString(out, r.st.prevID)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, '}')
	r.st.prevID, r.st.hasPrev = id, true
	r.st.record(r.index, id, true, false)
	return out, true
}

// Entries migrates the parsed lines of a file in memory, as pi does on
// open. The first header decides: version 3 or newer (or not a number)
// returns the entries unchanged. Otherwise every line goes through the
// steps and is re-encoded as pi's rewrite would write it.
func Entries(entries []layout.Entry) ([]layout.Entry, Result, error) {
	var res Result
	if len(entries) == 0 || !entries[0].IsHeader() {
		return entries, res, nil
	}
	res.From = VersionOf(&entries[0])
	res.To = int(res.From)
	if !Needed(res.From) {
		return entries, res, nil
	}
	run := newRunner(entries[0].ID, res.From)
	out := make([]layout.Entry, len(entries))
	for i := range entries {
		b, err := run.apply(&entries[i])
		if err != nil {
			return nil, res, err
		}
		e, err := layout.ParseEntry(b)
		if err != nil {
			return nil, res, err
		}
		e.Line, e.Offset = entries[i].Line, entries[i].Offset
		out[i] = e
		if !e.IsHeader() {
			res.Entries++
		}
	}
	res.Migrated = true
	res.To = layout.CurrentVersion
	return out, res, nil
}

// ErrNoHeader is wrapped by Stream when the first object of the input is
// not a session header with a string id (pi would truncate such a file;
// sessctl refuses to touch it).
var ErrNoHeader = errors.New("no valid session header")

// Stream migrates a whole session file from r to w, one line at a time, so
// memory is bounded by the longest line. It reads like pi's loader (blank
// lines skipped, lines that are not JSON objects dropped and counted) and
// writes every kept line re-encoded as pi's rewrite does, each followed by
// '\n'. When the file needs no migration nothing is written and
// Result.Migrated is false; callers then leave the file alone.
func Stream(ctx context.Context, r io.Reader, w io.Writer) (Result, error) {
	var res Result
	br := bufio.NewReaderSize(r, 1<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	var run *runner
	lineNo := 0
	// emit migrates and writes one entry; done means the file needs no
	// migration and nothing more is read.
	emit := func(e layout.Entry, lineNo int) (done bool, err error) {
		if run == nil {
			if !e.IsHeader() || e.IDKind != layout.KindString {
				return false, fmt.Errorf("line %d: %w", lineNo, ErrNoHeader)
			}
			res.From = VersionOf(&e)
			res.To = int(res.From)
			if !Needed(res.From) {
				return true, nil
			}
			run = newRunner(e.ID, res.From)
		}
		out, err := run.apply(&e)
		if err != nil {
			return false, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if !e.IsHeader() {
			res.Entries++
		}
		out = append(out, '\n')
		_, err = bw.Write(out)
		return false, err
	}
	// pi trims the whole text with JavaScript's notion of whitespace, so
	// the leading blank lines and the whitespace before the first object
	// go, and so does the whitespace after the last one: a last line that
	// parses only without its trailing whitespace is held in tail until
	// the end shows nothing else follows.
	leading := true
	var tail []byte
	tailLine := 0
	for {
		line, rerr := readLine(br)
		if rerr != nil && rerr != io.EOF {
			return res, rerr
		}
		atEOF := rerr == io.EOF
		if len(line) == 0 && atEOF {
			break
		}
		lineNo++
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		terminated := len(line) > 0 && line[len(line)-1] == '\n'
		body := line
		if terminated {
			body = line[:len(line)-1]
		}
		if leading {
			body = trimLeadingJS(body)
		}
		if blank(body) {
			if atEOF {
				break
			}
			continue
		}
		leading = false
		if tail != nil {
			res.Malformed++ // not the last line after all
			tail = nil
		}
		e, err := layout.ParseEntry(body)
		if err != nil {
			if t := trimTrailingJS(body); len(t) < len(body) {
				if _, terr := layout.ParseEntry(t); terr == nil {
					tail, tailLine = t, lineNo
					if atEOF {
						break
					}
					continue
				}
			}
			res.Malformed++
			if !terminated && atEOF {
				res.Torn = true
			}
			if atEOF {
				break
			}
			continue
		}
		done, err := emit(e, lineNo)
		if err != nil || done {
			return res, err
		}
		if atEOF {
			break
		}
	}
	if tail != nil {
		e, _ := layout.ParseEntry(tail)
		done, err := emit(e, tailLine)
		if err != nil || done {
			return res, err
		}
	}
	if run == nil {
		return res, ErrNoHeader
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	res.Migrated = true
	res.To = layout.CurrentVersion
	return res, nil
}

// readLine reads one line including its '\n' (without one at EOF). Memory
// grows only with the longest line.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if len(line) > 0 {
			out := make([]byte, len(line))
			copy(out, line)
			return out, err
		}
		return nil, err
	}
	buf := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		line, err = br.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}

// blank reports whether a line is empty after JavaScript's trim.
func blank(b []byte) bool {
	for _, r := range string(b) {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
		case r == 0xA0 || r == 0x1680 || r == 0x2028 || r == 0x2029 || r == 0x202F || r == 0x205F || r == 0x3000 || r == 0xFEFF:
		case r >= 0x2000 && r <= 0x200A:
		default:
			return false
		}
	}
	return true
}

// trimTrailingJS removes JavaScript whitespace at the end of a line.
func trimTrailingJS(b []byte) []byte {
	for len(b) > 0 {
		_, n := utf8.DecodeLastRune(b)
		if !blank(b[len(b)-n:]) {
			return b
		}
		b = b[:len(b)-n]
	}
	return b
}

// trimLeadingJS removes JavaScript whitespace at the start of the file (pi
// trims the whole text, which strips a byte order mark, for example).
func trimLeadingJS(b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == '\n' || !blank(b[:n]) {
			return b
		}
		b = b[n:]
	}
	return b
}
