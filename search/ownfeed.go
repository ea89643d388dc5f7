package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// An update of the own index reads the files on a goroutine of its own
// (the feed): it opens each, reads and parses its lines and extracts
// their texts, while the update's goroutine adds the texts to the
// builder and keeps the state. Both take a CPU on a first build, where
// adding the texts (their terms' lookups) is most of the work. The feed
// never touches the state: what it needs of a file's record is copied
// into its job first, and what it finds goes back in the chunks.

// feedChunks is how many chunks there are (in the feed, the channel and
// the indexer), and feedText about the most text a chunk holds (a var:
// tests make it small): the feed's memory is bounded by their product, a
// long file's lines go in several chunks.
const feedChunks = 3

var feedText = 256 << 10

// feedJob is a file to read, with the fields of its record (if any) that
// say where its new lines begin.
type feedJob struct {
	f                 *found // of the walk's files
	hasPrev           bool
	prevKind          fileKind
	prevIno           uint64
	prevEnd, prevTail int64
	prevTailCRC       uint32
}

// feedLine is one line with texts: where it is and its time.
type feedLine struct {
	off, n, ts int64
	lo, hi     int // its texts, chunk.docs[lo:hi]
}

// feedChunk is a run of one file's lines with their texts (which point
// into tb). A file's first chunk says how it was opened and where its
// new lines begin, its last what the reading found.
type feedChunk struct {
	job         int
	first, last bool
	lines       []feedLine
	docs        []doc
	tb          textBuf

	// The first chunk's.
	f       found // as stat'ed
	openErr error // it could not be opened: it is dropped
	fh      vfs.File
	mtime   int64 // 0 when too recent to trust (racy)
	from    int64

	// The last chunk's.
	readErr error
	scan    sessionScan
}

func (c *feedChunk) reset(job int) {
	tb := c.tb
	tb.reset()
	// Room for a chunk's text from the start: the texts point into the
	// buffer, so a buffer outgrown would be kept alive beside its copy.
	if want := feedText + feedText/4; cap(tb.b) < want {
		tb.b = make([]byte, 0, want)
	}
	*c = feedChunk{job: job, lines: c.lines[:0], docs: c.docs[:0], tb: tb}
}

// feedJobs makes the feed's jobs of work, copying what the feed needs of
// the files' records.
func (o *own) feedJobs(work []*found) []feedJob {
	jobs := make([]feedJob, len(work))
	for i, f := range work {
		jobs[i].f = f
		if r := o.st.Files[f.path]; r != nil {
			jobs[i].hasPrev = true
			jobs[i].prevKind, jobs[i].prevIno, jobs[i].prevEnd = r.Kind, r.Ino, r.End
			jobs[i].prevTail, jobs[i].prevTailCRC = r.TailOff, r.TailCRC
		}
	}
	return jobs
}

// feed reads jobs in order and sends their chunks to out, taking empty
// chunks from free; it stops when quit is closed or ctx is done, and
// closes out when it stops.
func (o *own) feed(ctx context.Context, jobs []feedJob, out chan<- *feedChunk, free <-chan *feedChunk, quit <-chan struct{}) {
	defer close(out)
	fd := &feeder{o: o, out: out, free: free, quit: quit}
	for i := range jobs {
		if ctx.Err() != nil || !fd.file(i, &jobs[i]) {
			return
		}
	}
}

type feeder struct {
	o    *own
	out  chan<- *feedChunk
	free <-chan *feedChunk
	quit <-chan struct{}
	buf  []byte
}

// take returns an empty chunk for job i, or nil when told to stop.
func (fd *feeder) take(i int) *feedChunk {
	select {
	case c := <-fd.free:
		c.reset(i)
		return c
	case <-fd.quit:
		return nil
	}
}

func (fd *feeder) send(c *feedChunk) bool {
	select {
	case fd.out <- c:
		return true
	case <-fd.quit:
		return false
	}
}

// file reads job i; false when told to stop.
func (fd *feeder) file(i int, j *feedJob) bool {
	c := fd.take(i)
	if c == nil {
		return false
	}
	c.first, c.f = true, *j.f
	fh, err := fd.o.x.fsys().OpenFile(j.f.path, os.O_RDONLY, 0)
	var fi fs.FileInfo
	if err == nil {
		fi, err = fh.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		if fh != nil {
			fh.Close()
		}
		c.openErr, c.last = err, true
		return fd.send(c)
	}
	c.f.set(fi)
	c.mtime = c.f.mtime
	if time.Since(fi.ModTime()) < racy {
		c.mtime = 0
	}
	if c.f.kind != fileJSONL {
		// The indexer reads the file itself (AgentUse files are small).
		c.fh, c.last = fh, true
		return fd.send(c)
	}
	defer fh.Close()
	f := c.f
	if j.hasPrev && j.prevKind == fileJSONL && j.prevIno == f.ino {
		c.from = grownFrom(fh, f.size, j.prevTail, j.prevEnd, j.prevTailCRC, &fd.buf)
	}
	// What the reading finds about the file is kept in sc, not in c: a
	// long file's lines go in several chunks, the last one says it.
	var sc sessionScan
	if c.from > 0 {
		sc.tailOff, sc.end, sc.tailCRC = j.prevTail, c.from, j.prevTailCRC
	}
	stopped := false
	err = eachEntry(fh, c.from, f.size, &fd.buf, &sc, func(off, n int64, e *jsonl.Entry) bool {
		lo := len(c.docs)
		c.docs = lineDocsIn(&c.tb, e, c.docs)
		ts := int64(0)
		if ms, ok := jsonl.ParseDate(e.Timestamp); ok && !math.IsNaN(ms) {
			ts = int64(ms)
		}
		c.lines = append(c.lines, feedLine{off: off, n: n, ts: ts, lo: lo, hi: len(c.docs)})
		if len(c.tb.b) >= feedText || len(c.lines) >= 4096 {
			if !fd.send(c) {
				stopped = true
				return false
			}
			if c = fd.take(i); c == nil {
				stopped = true
				return false
			}
		}
		return true
	})
	if stopped {
		return false
	}
	if sc.notSession {
		sc.tailOff, sc.end, sc.tailCRC = 0, 0, 0
	}
	c.last, c.readErr, c.scan = true, err, sc
	return fd.send(c)
}

// index indexes the files of work, in order, with the feed reading them:
// the body of update. It returns once the feed has stopped.
func (o *own) index(ctx context.Context, w *ownWriter, work []*found, total int64) error {
	st := o.st
	jobs := o.feedJobs(work)
	out := make(chan *feedChunk, feedChunks-2)
	free := make(chan *feedChunk, feedChunks)
	for range feedChunks {
		free <- &feedChunk{tb: textBuf{shared: true}}
	}
	quit := make(chan struct{})
	go o.feed(ctx, jobs, out, free, quit)
	stop := func(err error) error {
		close(quit)
		for c := range out {
			if c.fh != nil {
				c.fh.Close()
			}
		}
		return err
	}
	var done int64
	// The file of the chunks: what its first chunk said holds for them all.
	var (
		r     *ownFile
		se    *ownSession
		f     found
		mtime int64
		from  int64
	)
	next := 0
	for c := range out {
		if err := ctx.Err(); err != nil {
			return stop(err)
		}
		if c.first && c.job != next || !c.first && c.job != next-1 {
			return stop(fmt.Errorf("update search index %s: the feed gave file %d out of turn", o.dir, c.job))
		}
		if c.first {
			f, mtime, from = c.f, c.mtime, c.from
			next++
			st.touch(f.path, f.session)
			if r := st.Files[f.path]; r != nil {
				st.touchSession(r.Session)
			}
			switch {
			case c.openErr != nil:
				if !errors.Is(c.openErr, fs.ErrNotExist) {
					o.x.warn(fmt.Errorf("read %s: %w", f.path, c.openErr))
				}
				if r := st.Files[f.path]; r != nil {
					o.drop(f.path, r)
				}
			case c.fh != nil:
				n, err := w.indexAgentUse(c.fh, f, mtime)
				c.fh.Close()
				if err != nil {
					return stop(err)
				}
				done += n
			default:
				r = st.Files[f.path]
				if from == 0 {
					r = o.renumber(f)
				}
				se = st.Sessions[f.session]
				if se == nil || from == 0 {
					se = &ownSession{Format: layout.FormatJSONL}
					st.Sessions[f.session] = se
				}
			}
		}
		for _, l := range c.lines {
			w.docs = c.docs[l.lo:l.hi]
			if err := w.add(r, l.off, l.n, l.ts); err != nil {
				return stop(err)
			}
		}
		if c.last && c.openErr == nil && c.fh == nil {
			if c.scan.header {
				se.ID, se.Cwd = c.scan.id, c.scan.cwd
			}
			if c.scan.named {
				se.Name = c.scan.name
			}
			if c.readErr != nil {
				o.x.warn(fmt.Errorf("read %s: %w", f.path, c.readErr))
				o.drop(f.path, r)
			} else {
				r.Size, r.Mtime, r.Ino, r.Ctime = f.size, mtime, f.ino, f.ctime
				r.End, r.TailOff, r.TailCRC = c.scan.end, c.scan.tailOff, c.scan.tailCRC
				done += f.size - from
			}
		}
		if c.last && o.x.o.Progress != nil {
			o.x.o.Progress(min(done, total), total)
		}
		c.fh = nil
		w.docs = nil
		free <- c
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if next != len(jobs) {
		return fmt.Errorf("update search index %s: the feed stopped after %d of %d files", o.dir, next, len(jobs))
	}
	return nil
}
