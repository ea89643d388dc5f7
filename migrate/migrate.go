package migrate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// VersionOf returns the version pi sees in a header: the version member
// coerced to a number the way JavaScript's "<" does, 1 when it is absent or
// null, NaN when it is not a number at all (pi then migrates nothing).
func VersionOf(h *tree.Entry) float64 {
	v, ok := h.Field("version")
	if !ok {
		return 1
	}
	switch jsonl.KindOf(v) {
	case jsonl.KindNull:
		return 1
	case jsonl.KindNumber:
		f, _ := jsonl.Number(v)
		return f
	case jsonl.KindBool:
		if v[0] == 't' {
			return 1
		}
		return 0
	case jsonl.KindString:
		s, _ := jsonl.String(v)
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
func Needed(v float64) bool { return v < jsonl.CurrentVersion }

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
	for _, s := range Steps() {
		if version < float64(s.To) {
			r.steps = append(r.steps, s)
		}
	}
	return r
}

// applyKnown migrates one parsed line and appends its new JSON bytes to
// dst; whether e.Raw is canonical may be known already (canon 1 or -1; 0:
// not known).
func (r *runner) applyKnown(dst []byte, e *jsonl.Entry, canon int8) ([]byte, error) {
	if out, ok := r.fast(dst, e, canon); ok {
		r.index++
		return out, nil
	}
	rec, err := ParseRecord(e.Raw)
	if err != nil {
		return dst, err
	}
	for _, s := range r.steps {
		s.Apply(r.st, r.index, rec)
	}
	r.index++
	return rec.AppendJSON(dst), nil
}

// fast handles the lines that make up nearly every file without decoding
// them: an entry that the steps change only by adding id and parentId (v1)
// or not at all (v2), already written as JSON.stringify writes it. The
// result is byte for byte what the general path gives.
func (r *runner) fast(dst []byte, e *jsonl.Entry, canon int8) ([]byte, bool) {
	if !r.fastOK(e, canon) {
		return dst, false
	}
	if !r.v1() {
		return append(dst, e.Raw...), true // v2 -> v3 changes nothing here
	}
	id := r.st.EntryID(r.index)
	dst = append(dst, e.Raw[:len(e.Raw)-1]...)
	dst = appendIDs(dst, len(e.Raw), id, r.st.prevID, r.st.hasPrev)
	r.st.prevID, r.st.hasPrev = id, true
	return dst, true
}

// v1 reports whether the steps start at version 1 (ids are assigned).
func (r *runner) v1() bool { return len(r.steps) > 0 && r.steps[0].From == 1 }

// fastOK reports whether fast handles e.
func (r *runner) fastOK(e *jsonl.Entry, canon int8) bool {
	if e.IsHeader() || e.Type == jsonl.TypeCompaction || e.Role == "hookMessage" ||
		(e.Type == jsonl.TypeMessage && e.Message() == nil) {
		return false
	}
	if r.v1() && (e.IDKind != jsonl.KindAbsent || e.ParentKind != jsonl.KindAbsent) {
		return false // the step overwrites in place: general path
	}
	return canon > 0 || canon == 0 && jsonl.IsCanonical(e.Raw)
}

// appendIDs appends what the v1 fast path puts in place of the closing
// brace of a line of rawLen bytes: the id and parentId members and the
// brace.
func appendIDs(dst []byte, rawLen int, id, parent string, hasParent bool) []byte {
	if rawLen > 2 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":"`...)
	dst = append(dst, id...) // 8 hex digits: nothing to escape
	dst = append(dst, `","parentId":`...)
	if hasParent {
		dst = jsonl.AppendString(dst, parent)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}

// Entries migrates the parsed lines of a file in memory, as pi does on
// open. The first header decides: version 3 or newer (or not a number)
// returns the entries unchanged. Otherwise every line goes through the
// steps and is re-encoded as pi's rewrite would write it.
func Entries(entries []tree.Entry) ([]tree.Entry, Result, error) {
	m, err := InMemory(entries, nil)
	if err != nil {
		return nil, m.Result, err
	}
	return m.Entries, m.Result, nil
}

// ErrNoHeader is wrapped by Stream when the first object of the input is
// not a session header with a string id (pi would truncate such a file;
// sessctl refuses to touch it).
var ErrNoHeader = errors.New("no valid session header")

// Stream migrates a whole session file from r to w, so that memory is
// bounded by the longest line, not the file's size. It reads like pi's
// loader (blank lines skipped, lines that are not JSON objects dropped and
// counted) and writes every kept line re-encoded as pi's rewrite does,
// each followed by '\n'. When the file needs no migration nothing is
// written and Result.Migrated is false; callers then leave the file alone.
//
// Lines are validated on every CPU, a chunk of lines at a time, while one
// goroutine applies the steps in order; a few chunks are in flight at most.
func Stream(ctx context.Context, r io.Reader, w io.Writer) (Result, error) {
	return stream(ctx, r, w, false)
}

// Version reads r up to its session header, as Stream would, and returns
// the header's version without migrating or reading further. An input
// without a valid header gives an error wrapping ErrNoHeader.
func Version(ctx context.Context, r io.Reader) (float64, error) {
	res, err := stream(ctx, r, io.Discard, true)
	return res.From, err
}

// stream is Stream; with peek it stops at the header.
func stream(ctx context.Context, r io.Reader, w io.Writer, peek bool) (Result, error) {
	var res Result
	bw := bufio.NewWriterSize(w, 1<<20)
	var run *runner
	var out []byte // reused for every line
	// emit migrates and writes one entry; done means the file needs no
	// migration and nothing more is read.
	emit := func(e jsonl.Entry, canon int8, lineNo int) (done bool, err error) {
		if run == nil {
			if !e.IsHeader() || e.IDKind != jsonl.KindString {
				return false, fmt.Errorf("line %d: %w", lineNo, ErrNoHeader)
			}
			res.From = VersionOf(&e)
			res.To = int(res.From)
			if peek || !Needed(res.From) {
				return true, nil
			}
			run = newRunner(e.ID, res.From)
		}
		if out, err = run.applyKnown(out[:0], &e, canon); err != nil {
			return false, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if !e.IsHeader() {
			res.Entries++
		}
		out = append(out, '\n')
		_, err = bw.Write(out)
		return false, err
	}
	sc := startScan(ctx, r)
	defer sc.stop()
	// pi trims the whole text with JavaScript's notion of whitespace, so
	// the leading blank lines and the whitespace before the first object
	// go, and so does the whitespace after the last one: a last line that
	// parses only without its trailing whitespace is held in tail until
	// the end shows nothing else follows.
	leading := true
	var tail []byte
	tailLine := 0
	lineNo := 0
	for {
		c, err := sc.next()
		if err != nil {
			return res, err
		}
		if c == nil {
			break
		}
		for i := range c.lines {
			l := &c.lines[i]
			lineNo++
			atEOF := c.last && i == len(c.lines)-1
			body, e, perr, canon := l.body, l.entry, l.err, l.canon
			if leading {
				if t := trimLeadingJS(body); len(t) != len(body) {
					body = t
					e, perr = jsonl.ParseEntry(body)
					canon = 0
				}
			}
			if l.blank || blank(body) {
				continue
			}
			leading = false
			if tail != nil {
				res.Malformed++ // not the last line after all
				tail = nil
			}
			if perr != nil {
				if t := trimTrailingJS(body); len(t) < len(body) {
					if _, terr := jsonl.ParseEntry(t); terr == nil {
						tail, tailLine = t, lineNo
						continue
					}
				}
				res.Malformed++
				if !l.terminated && atEOF {
					res.Torn = true
				}
				continue
			}
			done, err := emit(e, canon, lineNo)
			if err != nil || done {
				return res, err
			}
		}
	}
	if tail != nil {
		e, _ := jsonl.ParseEntry(tail)
		done, err := emit(e, 0, tailLine)
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
	res.To = jsonl.CurrentVersion
	return res, nil
}

// scanChunkSize is how much a chunk of lines holds, about: larger lines
// make larger chunks.
const scanChunkSize = 1 << 20

// scannedLine is one line with its parse, done by a scan worker.
type scannedLine struct {
	body       []byte // without its '\n'
	terminated bool
	blank      bool
	entry      jsonl.Entry
	err        error
	canon      int8 // 1: entry.Raw is canonical, -1: it is not, 0: not known
}

type scanChunk struct {
	data  []byte
	lines []scannedLine
	last  bool // the chunk ends the input
	done  chan struct{}
}

// scanner reads chunks of whole lines and parses them on every CPU,
// handing them out in order.
type scanner struct {
	order chan *scanChunk
	errc  chan error
	quit  chan struct{}
	wg    sync.WaitGroup
}

func startScan(ctx context.Context, r io.Reader) *scanner {
	workers := max(1, runtime.GOMAXPROCS(0))
	sc := &scanner{
		order: make(chan *scanChunk, 2*workers+2),
		errc:  make(chan error, 1),
		quit:  make(chan struct{}),
	}
	work := make(chan *scanChunk, 2*workers+2)
	for range workers {
		sc.wg.Go(func() {
			for c := range work {
				parseChunk(c)
				close(c.done)
			}
		})
	}
	sc.wg.Go(func() {
		defer close(work)
		defer close(sc.order)
		var carry []byte
		for n := 0; ; n++ {
			if n%8 == 0 {
				if err := ctx.Err(); err != nil {
					sc.errc <- err
					return
				}
			}
			buf := make([]byte, len(carry), max(scanChunkSize, 2*len(carry)))
			copy(buf, carry)
			m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			eof := err == io.EOF || err == io.ErrUnexpectedEOF
			if err != nil && !eof {
				sc.errc <- err
				return
			}
			var c *scanChunk
			switch cut := bytes.LastIndexByte(buf, '\n'); {
			case eof:
				carry = nil
				c = &scanChunk{data: buf, last: true}
			case cut < 0:
				carry = buf // a line longer than the chunk: read on
				continue
			default:
				carry = buf[cut+1:]
				c = &scanChunk{data: buf[:cut+1]}
			}
			c.done = make(chan struct{})
			select {
			case work <- c:
			case <-sc.quit:
				return
			}
			select {
			case sc.order <- c:
			case <-sc.quit:
				return
			}
			if c.last {
				return
			}
		}
	})
	return sc
}

// next returns the next parsed chunk, nil at the end.
func (sc *scanner) next() (*scanChunk, error) {
	c, ok := <-sc.order
	if !ok {
		select {
		case err := <-sc.errc:
			return nil, err
		default:
			return nil, nil
		}
	}
	<-c.done
	return c, nil
}

// stop ends the reader and the workers.
func (sc *scanner) stop() {
	close(sc.quit)
	for range sc.order {
	}
	sc.wg.Wait()
}

// parseChunk splits a chunk into lines and parses each one.
func parseChunk(c *scanChunk) {
	data := c.data
	for len(data) > 0 {
		var l scannedLine
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			l.body, l.terminated, data = data[:k], true, data[k+1:]
		} else {
			l.body, data = data, nil
		}
		if l.blank = blank(l.body); !l.blank {
			var canon bool
			l.entry, canon, l.err = jsonl.ParseEntryCanonical(l.body)
			if l.err == nil {
				l.canon = -1
				if canon {
					l.canon = 1
				}
			}
		}
		c.lines = append(c.lines, l)
	}
}

// blank reports whether a line is empty after JavaScript's trim.
func blank(b []byte) bool { return jsonl.JSBlank(b) }

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
