package replica

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// RemoteSession is a session the remote holds, as its newest manifest
// describes it (Remote.Sessions).
type RemoteSession struct {
	Kind, Name string
	// Gen is the manifest's generation, Host and Time who published it
	// and when (Time is zero when it does not parse).
	Gen  int64
	Host string
	Time time.Time
	// Size is the plain bytes of the session (a JSONL session's lines,
	// an AgentUse session's files), Lines a JSONL session's lines,
	// Files an AgentUse session's files.
	Size  int64
	Lines int
	Files int
	// Summary describes a JSONL session: from the manifest, or, for one
	// written by an earlier sessctl, its header alone (ID, Cwd, Created).
	Summary Summary
	// Err is why the session could not be read (the others are listed).
	Err error
}

// Sessions lists the sessions the remote holds, without a local store:
// one listing, and a GET of each newest manifest (Options.Parallel at a
// time); for a JSONL session whose manifest has no summary (an earlier
// sessctl's), the first line of its first segment. Deleted sessions
// (tombstones) are left out. They are sorted by kind and name.
func (r *Remote) Sessions(ctx context.Context) ([]RemoteSession, error) {
	heads, _, err := r.b.list(ctx)
	if err != nil {
		return nil, err
	}
	tombs, _, err := r.b.listKeys(ctx, "t/")
	if err != nil {
		return nil, err
	}
	var hs []*head
	for _, h := range sortedHeads(heads) {
		if _, dead := tombs[h.kind+"/"+h.name]; !dead {
			hs = append(hs, h)
		}
	}
	out := make([]RemoteSession, len(hs))
	sem := make(chan struct{}, r.opts.Parallel)
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = r.describe(ctx, h)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// describe reads what Sessions says of one session.
func (r *Remote) describe(ctx context.Context, h *head) RemoteSession {
	rs := RemoteSession{Kind: h.kind, Name: h.name, Gen: h.gen}
	m, err := r.b.getManifest(ctx, h)
	if err != nil {
		if m = r.olderManifest(ctx, h); m == nil {
			rs.Err = err
			return rs
		}
	}
	rs.Gen, rs.Host, rs.Size, rs.Lines, rs.Files = m.Gen, m.Host, m.Size, m.Lines, len(m.Files)
	rs.Time, _ = time.Parse(time.RFC3339, m.Time)
	switch {
	case m.Summary != nil:
		rs.Summary = *m.Summary
	case m.Kind == KindPi && len(m.Segments) > 0:
		// An earlier sessctl's manifest: the header says what it can.
		rc, err := r.b.openSegment(ctx, m.Segments[0])
		if err != nil {
			rs.Err = err
			return rs
		}
		line, _ := bufio.NewReaderSize(io.LimitReader(rc, 1<<20), 4096).ReadSlice('\n')
		rc.Close()
		rs.Summary.add(line)
	}
	return rs
}

// ReadSession writes the JSONL session the remote holds under name (as
// Delete takes it: "kind/name", the file name, or its session id or a
// unique prefix) to w, as a pull would restore it: the header, then the
// complete entry lines, streamed a segment at a time (each checked
// before the next is read; w may have received part of the session when
// a later segment turns out torn: the error says so). It returns the
// session's name and the lines it left out. A name no remote session has
// is an error wrapping engine.ErrNotFound.
func (r *Remote) ReadSession(ctx context.Context, name string, w io.Writer) (string, []RefusedLine, error) {
	heads, _, err := r.b.list(ctx)
	if err != nil {
		return "", nil, err
	}
	tombs, _, err := r.b.listKeys(ctx, "t/")
	if err != nil {
		return "", nil, err
	}
	for id := range tombs {
		delete(heads, id)
	}
	pis := map[string]*head{}
	for id, h := range heads {
		if h.kind == KindPi {
			pis[id] = h
		}
	}
	id, err := resolveRemote(pis, name)
	if err != nil {
		return "", nil, err
	}
	h := pis[id]
	m, err := r.b.getManifest(ctx, h)
	if err != nil {
		return h.name, nil, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var refused []RefusedLine
	for i, s := range m.Segments {
		var werr error
		sawHeader := false
		err := r.scanSegment(ctx, s, i == 0, func(k lineKind, line []byte, _ *jsonl.Entry, n int, why string) {
			switch k {
			case lineRefused:
				refused = append(refused, RefusedLine{Object: s.Object, Line: n, Reason: why})
				return
			case lineHeader:
				sawHeader = true
			}
			if werr == nil {
				_, werr = bw.Write(line)
			}
			if werr == nil {
				werr = bw.WriteByte('\n')
			}
		})
		if err == nil {
			err = werr
		}
		if err == nil && i == 0 && !sawHeader {
			err = fmt.Errorf("read %s: the remote copy does not start with a complete session header line: %w", h.name, ErrCorruptRemote)
		}
		if err != nil {
			bw.Flush()
			return h.name, refused, err
		}
	}
	return h.name, refused, bw.Flush()
}
