package replica

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Compaction keeps a session's segments few: every push adds one, and a
// pull reads them all. Segments are sized in classes growing by
// compactFanout from SegmentSize/256 (64 KiB by default); a segment of
// half SegmentSize or more is sealed and never merged again. Whenever the
// segments at the end of the list, from some class down, number
// compactFanout, they are merged into segments of at most SegmentSize, in
// order, bytes unchanged. So a session keeps at most compactFanout-1
// segments of each class besides its sealed ones: a session pushed 10,000
// times is a dozen segments or so, and each byte is rewritten about once
// per class. Merged segments are written before the manifest that names
// them; the objects they replace are listed in the manifest's Retired for
// a while and removed by a collection (Remote.Prune) only when no
// manifest names them any longer.
const compactFanout = 4

// retireKeep is how long a manifest lists the objects a compaction took
// out of it (Manifest.Retired): a reader that read an earlier generation
// finds its segments for at least that long.
const retireKeep = 15 * time.Minute

// compact merges runs of small data segments at the end of m's segments
// (before its inline ones) as the comment above says, and returns the
// objects no longer named. The bytes of a segment are taken from the
// local file (local, size bytes) where it holds them at the same place
// (the checksum says so), as a single writer's file does, and downloaded
// otherwise. A segment that cannot be read, or that does not end with a
// newline, stops the compaction: m is left as it was from there, and the
// push goes on.
func (r *Remote) compact(ctx context.Context, m *Manifest, local io.ReaderAt, size int64) (retired []string) {
	segSize := int64(r.opts.segmentSize())
	base := max(segSize/256, 1)
	sealed := func(s *Segment) bool { return s.Plain >= segSize/2 }
	class := func(p int64) int {
		c, t := 0, base*compactFanout
		for p >= t {
			c++
			t *= compactFanout
		}
		return c
	}
	top := class(segSize / 2)
	for {
		end := len(m.Segments)
		for end > 0 && m.Segments[end-1].inline() {
			end--
		}
		merged := false
		for c := 0; c <= top && !merged; c++ {
			start := end
			for start > 0 {
				s := &m.Segments[start-1]
				if s.inline() || sealed(s) || class(s.Plain) > c {
					break
				}
				start--
			}
			if end-start < compactFanout {
				continue
			}
			var off int64
			for _, s := range m.Segments[:start] {
				off += s.Plain
			}
			segs, ok := r.mergeSegments(ctx, m.Segments[start:end], m.Encrypted, local, size, off)
			if !ok {
				return retired
			}
			for _, s := range m.Segments[start:end] {
				retired = append(retired, s.Object)
			}
			out := make([]Segment, 0, len(m.Segments)-(end-start)+len(segs))
			out = append(out, m.Segments[:start]...)
			out = append(out, segs...)
			m.Segments = append(out, m.Segments[end:]...)
			merged = true
		}
		if !merged {
			return retired
		}
	}
}

// mergeSegments writes the lines of segs, in order, as data objects of at
// most SegmentSize bytes; off is where the first starts in the session's
// bytes (see compact for local). ok is false when one cannot be read
// whole or ends without a newline (its lines cannot be moved across a
// segment boundary unchanged).
func (r *Remote) mergeSegments(ctx context.Context, segs []Segment, encrypted bool, local io.ReaderAt, size, off int64) (out []Segment, ok bool) {
	w := &segBuilder{b: r.b, max: r.opts.segmentSize()}
	defer w.abandon()
	for _, s := range segs {
		// A segment is read whole before its lines are added: what a
		// torn one held must not reach the new objects.
		data, err := r.segmentBytes(ctx, s, encrypted, local, size, off)
		off += s.Plain
		if err != nil || (len(data) > 0 && data[len(data)-1] != '\n') {
			return nil, false
		}
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if err := w.add(ctx, data[:i]); err != nil {
				return nil, false
			}
			data = data[i+1:]
		}
	}
	if err := w.flush(ctx); err != nil {
		return nil, false
	}
	return w.segs, true
}

// segmentBytes returns the plain bytes of s, which starts at off in the
// session: from the local file when it holds them there, else from the
// remote (checked).
func (r *Remote) segmentBytes(ctx context.Context, s Segment, encrypted bool, local io.ReaderAt, size, off int64) ([]byte, error) {
	if s.inline() {
		return s.Data, nil
	}
	if want := plainSum(&s, encrypted); want != "" && local != nil && off+s.Plain <= size {
		data := make([]byte, s.Plain)
		if _, err := local.ReadAt(data, off); err == nil && sha(data) == want {
			return data, nil
		}
	}
	rc, err := r.b.openSegment(ctx, s)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := readAllInto(rc, make([]byte, 0, s.Plain))
	if err == io.EOF {
		err = nil
	}
	return data, err
}

// summaryBase returns the summary a push of the local lines from p
// updates (incremental), or, for a remote copy without one (written by
// an earlier sessctl), the summary of the whole local file f, complete
// already (incremental false).
func (r *Remote) summaryBase(man *Manifest, f io.ReaderAt, end int64) (sum *Summary, incremental bool) {
	switch {
	case man == nil:
		return &Summary{}, true
	case man.Summary != nil:
		c := *man.Summary
		return &c, true
	}
	sum = &Summary{}
	_ = localLines(f, 0, end, func(_ int64, line []byte) error {
		if r.opts.Transform != nil {
			t, err := r.opts.Transform(bytes.Clone(line))
			if err != nil {
				return nil
			}
			line = t
		}
		sum.add(line)
		return nil
	})
	return sum, false
}

// maxFirstMessage bounds Summary.FirstMessage, in bytes.
const maxFirstMessage = 200

// add takes one line of the session into the summary.
func (s *Summary) add(line []byte) {
	e, err := jsonl.ParseEntry(line)
	if err != nil {
		return
	}
	switch {
	case e.IsHeader():
		if s.ID == "" && e.IDKind == jsonl.KindString {
			s.ID = e.ID
			s.Cwd, _ = e.StringField("cwd")
			s.Created = e.Timestamp
		}
	case e.Type == jsonl.TypeMessage:
		s.Messages++
		if e.Role == "user" || e.Role == "assistant" {
			s.LastMessage = e.Timestamp
		}
		if s.FirstMessage == "" && e.Role == "user" {
			s.FirstMessage = clip(firstText(e.Message(), maxFirstMessage), maxFirstMessage)
		}
	case e.Type == jsonl.TypeSessionInfo:
		name, _ := e.StringField("name")
		s.Name = clip(strings.TrimSpace(name), maxFirstMessage)
	}
}

// firstText is the text of a message as pi's listing takes it: its
// content when that is a string, else its text parts joined by spaces;
// at most about n bytes are gathered.
func firstText(msg []byte, n int) string {
	content, ok := jsonl.Lookup(msg, "content")
	if !ok {
		return ""
	}
	if s, ok := jsonl.String(content); ok {
		return s
	}
	var sb strings.Builder
	first := true
	_ = jsonl.Elements(content, func(v []byte) bool {
		if t, ok := jsonl.Lookup(v, "type"); ok {
			if ts, _ := jsonl.String(t); ts == "text" {
				if !first {
					sb.WriteByte(' ')
				}
				first = false
				if x, ok := jsonl.Lookup(v, "text"); ok {
					text, _ := jsonl.String(x)
					sb.WriteString(text)
				}
			}
		}
		return sb.Len() <= n
	})
	return sb.String()
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
