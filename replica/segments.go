package replica

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"filippo.io/age"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// openSegment streams the plain bytes of a JSONL session's segment. The
// object's stated size bounds what is read; the last Read returns io.EOF
// only when the stored bytes hash to the segment's sha256 and the plain
// bytes number what the manifest says, and an error wrapping
// ErrCorruptRemote otherwise. A caller keeps nothing it read before that
// last Read. An inline segment is read from the manifest.
func (b *bucket) openSegment(ctx context.Context, s Segment) (io.ReadCloser, error) {
	if s.inline() {
		return io.NopCloser(bytes.NewReader(s.Data)), nil
	}
	if !validObject(s.Object) {
		return nil, fmt.Errorf("read %s: not a data object name: %w", s.Object, ErrCorruptRemote)
	}
	b.st.gets.Add(1)
	rc, info, err := b.c.Get(ctx, s.Object)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("read %s: a manifest names it but it is missing: %w: %w", s.Object, err, ErrCorruptRemote)
		}
		return nil, err
	}
	if info.Size != s.Size {
		rc.Close()
		return nil, fmt.Errorf("read %s: %d bytes, the manifest says %d: %w", s.Object, info.Size, s.Size, ErrCorruptRemote)
	}
	v := &verifier{r: io.LimitReader(rc, s.Size+1), h: sha256.New(), st: b.st}
	br := bufio.NewReaderSize(v, 64<<10)
	sr := &segReader{body: rc, v: v, s: s, plain: br}
	if head, _ := br.Peek(len(ageMagic)); bytes.Equal(head, ageMagic) {
		if len(b.identities) == 0 {
			rc.Close()
			return nil, fmt.Errorf("read %s: %w", s.Object, ErrEncrypted)
		}
		d, err := age.Decrypt(br, b.identities...)
		if err != nil {
			rc.Close()
			if v.err != nil {
				return nil, v.err
			}
			return nil, fmt.Errorf("decrypt %s: %w: %w", s.Object, err, ErrCorruptRemote)
		}
		sr.plain, sr.rest = d, br
	} else if len(b.recipients) > 0 {
		rc.Close()
		return nil, fmt.Errorf("read %s: the object is not encrypted but encryption is configured: %w", s.Object, ErrCorruptRemote)
	}
	return sr, nil
}

// verifier hashes and counts the stored bytes read through it, and
// counts them as downloaded.
type verifier struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	st  *stats
	err error // the last non-EOF error
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	v.st.downloaded.Add(int64(n))
	if err != nil && err != io.EOF {
		v.err = err
	}
	return n, err
}

// segReader yields a segment's plain bytes and checks the whole at the
// end (see openSegment).
type segReader struct {
	body  io.Closer
	v     *verifier
	s     Segment
	plain io.Reader
	rest  io.Reader // what is left of the stored bytes after decryption
	n     int64     // plain bytes read
	done  error
}

func (r *segReader) Read(p []byte) (int, error) {
	if r.done != nil {
		return 0, r.done
	}
	n, err := r.plain.Read(p)
	r.n += int64(n)
	if r.n > r.s.Plain {
		r.done = fmt.Errorf("read %s: more than the %d bytes the manifest says: %w", r.s.Object, r.s.Plain, ErrCorruptRemote)
		return 0, r.done
	}
	switch {
	case err == io.EOF:
		r.done = r.check()
		return n, r.done
	case err != nil:
		if r.v.err != nil {
			err = r.v.err // the network's, not the decryption's
		} else if r.rest != nil {
			err = fmt.Errorf("decrypt %s: %w: %w", r.s.Object, err, ErrCorruptRemote)
		}
		r.done = err
		return n, err
	}
	return n, nil
}

// check runs at the end of the plain bytes: the stored bytes must end
// too, at the stated size, with the stated sha256.
func (r *segReader) check() error {
	if r.rest != nil {
		if _, err := io.Copy(io.Discard, r.rest); err != nil {
			return err
		}
	}
	if r.v.err != nil {
		return r.v.err
	}
	switch {
	case r.v.n < r.s.Size:
		// Cut short: the connection's fault, not the object's.
		return fmt.Errorf("read %s: %w", r.s.Object, io.ErrUnexpectedEOF)
	case r.v.n != r.s.Size:
		return fmt.Errorf("read %s: %d bytes, the manifest says %d: %w", r.s.Object, r.v.n, r.s.Size, ErrCorruptRemote)
	case hex.EncodeToString(r.v.h.Sum(nil)) != r.s.SHA256:
		return fmt.Errorf("read %s: sha256 does not match the manifest: %w", r.s.Object, ErrCorruptRemote)
	case r.n != r.s.Plain:
		return fmt.Errorf("read %s: %d bytes, the manifest says %d: %w", r.s.Object, r.n, r.s.Plain, ErrCorruptRemote)
	}
	return io.EOF
}

func (r *segReader) Close() error { return r.body.Close() }

// lineReader splits a stream into lines of any length.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its '\n' and whether it had one
// (the last line of the stream may not). The line is valid until the
// next call. At the end it returns io.EOF; any other error is the
// stream's.
func (l *lineReader) next() (line []byte, complete bool, err error) {
	l.buf = l.buf[:0]
	for {
		part, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			if len(l.buf) == 0 {
				return part[:len(part)-1], true, nil
			}
			l.buf = append(l.buf, part[:len(part)-1]...)
			return l.buf, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.buf = append(l.buf, part...)
		case err == io.EOF:
			l.buf = append(l.buf, part...)
			if len(l.buf) == 0 {
				return nil, false, io.EOF
			}
			return l.buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// segBuilder gathers lines into segments of at most max plain bytes (a
// longer line alone), uploading each as a data object when it is full.
// A full segment is uploaded while the next one is gathered (one upload
// in flight, so the object store's round trips overlap the reading and
// checking of the lines); flush uploads the rest and waits for all, and
// only then are segs complete.
type segBuilder struct {
	b    *bucket
	max  int
	buf  []byte
	segs []Segment
	up   *segUpload // the upload in flight, if any
}

// segUpload is one segment's upload in flight.
type segUpload struct {
	buf    []byte
	done   chan struct{}
	cancel context.CancelFunc
	seg    Segment
	err    error
}

// abandon cancels the upload in flight, if any, and waits for it: a
// builder left on an error returns with nothing of it still running.
// (After flush there is none.)
func (w *segBuilder) abandon() {
	if u := w.up; u != nil {
		u.cancel()
		<-u.done
		w.up = nil
	}
}

// add appends line (without its '\n').
func (w *segBuilder) add(ctx context.Context, line []byte) error {
	if len(w.buf) > 0 && len(w.buf)+len(line)+1 > w.max {
		if err := w.start(ctx); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, line...)
	w.buf = append(w.buf, '\n')
	return nil
}

// empty reports whether nothing was added.
func (w *segBuilder) empty() bool { return len(w.buf) == 0 && len(w.segs) == 0 && w.up == nil }

// wait waits for the upload in flight and takes its segment; it returns
// the upload's buffer for reuse.
func (w *segBuilder) wait() ([]byte, error) {
	u := w.up
	if u == nil {
		return nil, nil
	}
	<-u.done
	w.up = nil
	if u.err != nil {
		return nil, u.err
	}
	w.segs = append(w.segs, u.seg)
	return u.buf[:0], nil
}

// start uploads what is gathered, in the background, once the upload
// before it is done.
func (w *segBuilder) start(ctx context.Context) error {
	spare, err := w.wait()
	if err != nil {
		return err
	}
	if len(w.buf) == 0 {
		w.buf = spare
		return nil
	}
	uctx, cancel := context.WithCancel(ctx)
	u := &segUpload{buf: w.buf, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(u.done)
		defer cancel()
		u.seg, u.err = w.b.putData(uctx, u.buf)
		u.seg.Lines = bytes.Count(u.buf, []byte{'\n'})
	}()
	w.up, w.buf = u, spare
	return nil
}

// flush uploads what is gathered as a data object and waits for every
// upload: segs then holds them all, in order.
func (w *segBuilder) flush(ctx context.Context) error {
	if err := w.start(ctx); err != nil {
		return err
	}
	spare, err := w.wait()
	if spare != nil {
		w.buf = spare
	}
	return err
}

// lineKind is what a line of a remote copy is to a restore or merge.
type lineKind int

const (
	lineHeader  lineKind = iota // the session header, first in the copy
	lineEntry                   // a complete entry line
	lineRefused                 // anything else: never restored or merged
)

// classify says what a line of a remote copy is (see "JSONL sessions" in the
// layout: a restore or merge takes complete entry lines only). first is
// true for the first line of the copy's first segment, which must be the
// session header. The entry is parsed for the caller.
func classify(line []byte, complete, first bool) (k lineKind, e jsonl.Entry, why string) {
	if !complete {
		return lineRefused, e, "no newline at its end (an unfinished line)"
	}
	e, err := jsonl.ParseEntry(line)
	switch {
	case err != nil:
		return lineRefused, e, fmt.Sprintf("not a JSON object (%v)", err)
	case first:
		if e.IsHeader() && e.IDKind == jsonl.KindString && e.ID != "" {
			return lineHeader, e, ""
		}
		return lineRefused, e, "not a session header with a string id"
	case e.IsHeader():
		return lineRefused, e, "a session header after the first line"
	case e.IDKind != jsonl.KindString || e.ID == "":
		return lineRefused, e, "not an entry: it has no string id"
	}
	return lineEntry, e, ""
}

// scanSegment streams a segment of a remote copy and calls fn with each
// line (without its newline; valid during the call), what it is, and its
// 1-based number in the segment; first is true for the copy's first
// segment. It returns after the last line with the stream's verdict: nil,
// or an error (wrapping ErrCorruptRemote when the segment fails its
// checks, in which case what fn saw must be dropped).
func (r *Remote) scanSegment(ctx context.Context, s Segment, first bool, fn func(k lineKind, line []byte, e *jsonl.Entry, n int, why string)) error {
	rc, err := r.b.openSegment(ctx, s)
	if err != nil {
		return err
	}
	defer rc.Close()
	lr := newLineReader(rc)
	for n := 1; ; n++ {
		line, complete, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		k, e, why := classify(line, complete, first && n == 1)
		fn(k, line, &e, n, why)
	}
}
