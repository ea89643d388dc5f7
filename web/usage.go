package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

var pathEscape = url.PathEscape

// The tokens and cost of assistant messages, per session file, per day and
// per model: what the list's cost column and the stats page show. A file
// is read line by line (never whole: memory is bounded by its longest
// line), only the lines that mention an assistant are parsed, and the
// counts are kept with the file's size, time and identity, so that a file
// that only grew is read from where the last reading stopped.

// dayModel is one day (local time, YYYY-MM-DD) and model
// ("provider/model", stats.ModelName).
type dayModel struct {
	day   string
	model string
}

// tally is the assistant messages of one day and model.
type tally struct {
	messages int
	usage    stats.Usage
}

// fileUsage is the counts of one session file.
type fileUsage struct {
	key   statKey
	off   int64  // the bytes read: the end of the last complete line
	check []byte // the bytes before off, to tell that the file only grew
	by    map[dayModel]*tally
	total stats.Usage
	msgs  int
}

// usageCache holds the counts of the files read so far, and the reading
// of a whole store for the stats page.
type usageCache struct {
	h     *Handler
	mu    sync.Mutex
	files map[string]*fileUsage
	sem   chan struct{}   // at most two files read at once
	busy  map[string]bool // files being read in the background

	scanMu   sync.Mutex
	scanning bool
	scanAt   time.Time // when the last whole reading ended
	scanDone atomic.Int64
	scanAll  atomic.Int64
}

func newUsageCache(h *Handler) *usageCache {
	return &usageCache{h: h, files: map[string]*fileUsage{}, sem: make(chan struct{}, 2), busy: map[string]bool{}}
}

// background counts the file at path in the background, unless that is
// under way already.
func (c *usageCache) background(path string) {
	c.mu.Lock()
	if c.busy[path] {
		c.mu.Unlock()
		return
	}
	c.busy[path] = true
	c.mu.Unlock()
	c.h.goBG(func() {
		_, _ = c.get(c.h.ctx, path)
		c.mu.Lock()
		delete(c.busy, path)
		c.mu.Unlock()
	})
}

// peek returns the counts of the file at path when they are those of the
// file as listed (size and time), without reading it.
func (c *usageCache) peek(path string, k statKey) (*fileUsage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.files[path]
	if !ok || u.key.size != k.size || u.key.mtime != k.mtime {
		return nil, false
	}
	return u, true
}

// get returns the counts of the file at path as it is now, reading what
// it has not read yet.
func (c *usageCache) get(ctx context.Context, path string) (*fileUsage, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	c.mu.Lock()
	old := c.files[path]
	c.mu.Unlock()
	u, err := readUsage(c.h.fs(), path, old)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.files[path] = u
	c.mu.Unlock()
	return u, nil
}

// readUsage counts the file at path, going on from old when the file
// only grew since.
func readUsage(fsys vfs.FS, path string, old *fileUsage) (*fileUsage, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New(path + ": not a regular file")
	}
	k := keyOf(fi)
	if old != nil && old.key == k {
		return old, nil
	}
	u := &fileUsage{key: k, by: map[dayModel]*tally{}}
	if old != nil && old.key.ino == k.ino && k.ino != 0 && old.off <= k.size && grewFrom(f, old) {
		u.off, u.total, u.msgs = old.off, old.total, old.msgs
		for dm, t := range old.by {
			c := *t
			u.by[dm] = &c
		}
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, u.off, k.size-u.off), 256<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			break // the end, or a last line without its newline: read next time
		}
		line := chunk
		if long != nil {
			long = append(long, chunk...)
			line = long
		}
		u.off += int64(len(line))
		u.addLine(line)
		if long != nil {
			long = long[:0]
		}
	}
	n := min(u.off, 64)
	u.check = make([]byte, n)
	if _, err := f.ReadAt(u.check, u.off-n); err != nil {
		u.check = nil
	}
	u.key = k
	return u, nil
}

// grewFrom reports whether the file f still holds the bytes old.check
// just before old.off.
func grewFrom(f vfs.File, old *fileUsage) bool {
	if len(old.check) == 0 {
		return old.off == 0
	}
	b := make([]byte, len(old.check))
	_, err := f.ReadAt(b, old.off-int64(len(b)))
	return err == nil && bytes.Equal(b, old.check)
}

// addLine counts what one line spent, as engine/stats counts it
// (stats.EntrySpent): assistant messages, pi 1.x usage entries, the
// requests of compactions and branch summaries, tools' own model calls.
func (u *fileUsage) addLine(line []byte) {
	if !bytes.Contains(line, []byte(`"assistant"`)) && !bytes.Contains(line, []byte(`"usage"`)) {
		return // spent nothing: not parsed
	}
	e, err := jsonl.ParseEntry(bytes.TrimRight(line, "\r\n"))
	if err != nil {
		return
	}
	sp, ok := stats.EntrySpent(&e)
	if !ok {
		return
	}
	day := "unknown"
	if t, ok := entryTime(&e); ok {
		day = t.Local().Format("2006-01-02")
	}
	dm := dayModel{day: day, model: sp.Model}
	t := u.by[dm]
	if t == nil {
		t = &tally{}
		u.by[dm] = t
	}
	if sp.Message {
		t.messages++
		u.msgs++
	}
	t.usage.Add(sp.Usage)
	u.total.Add(sp.Usage)
}

// entryTime returns the time of an entry: its timestamp, else its
// message's (epoch milliseconds).
func entryTime(e *jsonl.Entry) (time.Time, bool) {
	if e.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
			return t, true
		}
	}
	if msg := e.Message(); msg != nil {
		if v, ok := jsonl.Lookup(msg, "timestamp"); ok {
			if ms, ok := jsonl.Number(v); ok && ms > 0 {
				return time.UnixMilli(int64(ms)), true
			}
		}
	}
	return time.Time{}, false
}

// scanStores brings the counts of every session file of the listing up to
// date, in the background, unless a reading is under way or one ended
// less than maxAge ago.
func (c *usageCache) scanStores(ls *listing, maxAge time.Duration) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if c.scanning || (!c.scanAt.IsZero() && c.h.o.Now().Sub(c.scanAt) < maxAge) {
		return
	}
	c.scanning = true
	var paths []string
	for _, r := range ls.rows {
		if r.Format == layout.FormatJSONL {
			paths = append(paths, r.Path)
		}
	}
	c.scanDone.Store(0)
	c.scanAll.Store(int64(len(paths)))
	c.h.goBG(func() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
					if c.h.ctx.Err() != nil {
						return
					}
					c.refresh(paths[i])
					c.scanDone.Add(1)
				}
			})
		}
		wg.Wait()
		c.scanMu.Lock()
		c.scanning = false
		c.scanAt = c.h.o.Now()
		c.scanMu.Unlock()
	})
}

// refresh brings the counts of one file up to date when its stat
// changed; errors leave it out (the listing reports unreadable files).
func (c *usageCache) refresh(path string) {
	fi, err := c.h.fs().Stat(path)
	if err != nil {
		return
	}
	c.mu.Lock()
	u := c.files[path]
	c.mu.Unlock()
	if u != nil && u.key == keyOf(fi) {
		return
	}
	_, _ = c.get(c.h.ctx, path)
}

// scanState reports the whole reading's progress.
func (c *usageCache) scanState() (running bool, done, all int64, at time.Time) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	return c.scanning, c.scanDone.Load(), c.scanAll.Load(), c.scanAt
}

// sumRows adds up the counts held for rows (whatever their age: the stats
// page says when they were read) per model and per day, keeping the days
// in [from, to) when those are set.
func (c *usageCache) sumRows(rows []*row, from, to string) (byModel, byDay map[string]*tally, total tally, files int) {
	byModel, byDay = map[string]*tally{}, map[string]*tally{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rows {
		u := c.files[r.Path]
		if u == nil {
			continue
		}
		files++
		for dm, t := range u.by {
			if (from != "" && dm.day < from) || (to != "" && dm.day >= to) {
				continue
			}
			for _, m := range []struct {
				set map[string]*tally
				key string
			}{{byModel, dm.model}, {byDay, dm.day}} {
				x := m.set[m.key]
				if x == nil {
					x = &tally{}
					m.set[m.key] = x
				}
				x.messages += t.messages
				x.usage.Add(t.usage)
			}
			total.messages += t.messages
			total.usage.Add(t.usage)
		}
	}
	return byModel, byDay, total, files
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]*tally) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
