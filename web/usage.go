package web

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

var pathEscape = url.PathEscape

// The tokens and cost of what each session file spent, per day and per
// model: what the list's cost column, a session's page and the stats page
// show. The counting is engine/stats's (stats.ReadFileUsage for one file,
// stats.Dir with DirOptions.Usage for a whole store, through the stats
// index in the cache directory, so that a viewer started again reads only
// the files that changed); the viewer only holds the last counts it was
// given, with the stat they were counted at.

// dayModel is one day (local time, YYYY-MM-DD) and model
// ("provider/model", stats.ModelName).
type dayModel struct {
	day   string
	model string
}

// tally is the assistant messages of one day and model, and what was
// spent.
type tally struct {
	messages int
	usage    stats.Usage
}

// fileUsage is the counts of one session file, as stats gave them.
type fileUsage struct {
	key   statKey // the file's size and time when counted (and inode, when known)
	by    map[dayModel]*tally
	total stats.Usage
	msgs  int
}

// fileUsageOf reshapes what stats counted of a file.
func fileUsageOf(fu *stats.FileUsage, ino uint64) *fileUsage {
	u := &fileUsage{key: statKey{size: fu.Size, mtime: fu.ModTime.UnixNano(), ino: ino}, by: make(map[dayModel]*tally, len(fu.Days))}
	for _, d := range fu.Days {
		u.by[dayModel{day: d.Day, model: d.Model}] = &tally{messages: d.Messages, usage: d.Usage}
	}
	u.msgs, u.total = fu.Total()
	return u
}

// readUsage counts the file at path with stats.ReadFileUsage; old, the
// counts held, is returned as it is while the file's stat is unchanged.
func readUsage(fsys vfs.FS, path string, old *fileUsage) (*fileUsage, error) {
	fi, err := fsys.Stat(path)
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
	fu, err := stats.ReadFileUsage(fsys, path)
	if err != nil {
		return nil, err
	}
	ino := k.ino
	if fu.Size != k.size || fu.ModTime.UnixNano() != k.mtime {
		ino = 0 // changed since the stat: never taken for unchanged
	}
	return fileUsageOf(fu, ino), nil
}

// entryTime returns the time of an entry, as stats files its usage
// under (stats.EntryTime).
func entryTime(e *engine.Entry) (time.Time, bool) { return stats.EntryTime(e) }

// usageTable holds the counts stats gave for the files seen so far, and
// the state of the counting of every store for the stats page.
type usageTable struct {
	h     *Handler
	mu    sync.Mutex
	files map[string]*fileUsage
	sem   chan struct{}   // at most two files read at once
	busy  map[string]bool // files being read in the background

	scanMu   sync.Mutex
	scanning bool
	scanAt   time.Time // when the last whole counting ended
	scanDone atomic.Int64
	scanAll  atomic.Int64
}

func newUsageTable(h *Handler) *usageTable {
	return &usageTable{h: h, files: map[string]*fileUsage{}, sem: make(chan struct{}, 2), busy: map[string]bool{}}
}

// background counts the file at path in the background, unless that is
// under way already.
func (c *usageTable) background(path string) {
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
func (c *usageTable) peek(path string, k statKey) (*fileUsage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.files[path]
	if !ok || u.key.size != k.size || u.key.mtime != k.mtime {
		return nil, false
	}
	return u, true
}

// get returns the counts of the file at path as it is now.
func (c *usageTable) get(ctx context.Context, path string) (*fileUsage, error) {
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

// scanStores has stats count every JSONL store of the viewer (stats.Dir,
// which reads only the files its index does not know as they are), in
// the background, unless a counting is under way or one ended less than
// maxAge ago. ls, the listing, tells how many files there are to count.
func (c *usageTable) scanStores(ls *listing, maxAge time.Duration) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if c.scanning || (!c.scanAt.IsZero() && c.h.o.Now().Sub(c.scanAt) < maxAge) {
		return
	}
	c.scanning = true
	all := 0
	for _, r := range ls.rows {
		if r.Format == layout.FormatJSONL {
			all++
		}
	}
	var roots []string
	for _, st := range c.h.stores {
		if st.Format == layout.FormatJSONL && !slices.Contains(roots, st.root) {
			roots = append(roots, st.root)
		}
	}
	c.scanDone.Store(0)
	c.scanAll.Store(int64(all))
	c.h.goBG(func() {
		for _, root := range roots {
			if c.h.ctx.Err() != nil {
				break
			}
			// Errors leave files out (the listing reports unreadable
			// ones); a store that is not there counts nothing.
			_, _ = stats.Dir(c.h.ctx, root, stats.DirOptions{FS: c.h.fs(), CacheDir: c.h.o.CacheDir, Usage: func(fu *stats.FileUsage) {
				u := fileUsageOf(fu, 0)
				c.mu.Lock()
				if old := c.files[fu.Path]; old == nil || old.key.size != u.key.size || old.key.mtime != u.key.mtime {
					c.files[fu.Path] = u
				}
				c.mu.Unlock()
				if c.scanDone.Load() < c.scanAll.Load() {
					c.scanDone.Add(1)
				}
			}})
		}
		c.scanMu.Lock()
		c.scanning = false
		c.scanAt = c.h.o.Now()
		c.scanMu.Unlock()
	})
}

// scanState reports the whole counting's progress.
func (c *usageTable) scanState() (running bool, done, all int64, at time.Time) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	return c.scanning, c.scanDone.Load(), c.scanAll.Load(), c.scanAt
}

// sumRows adds up the counts held for rows (whatever their age: the stats
// page says when they were read) per model and per day, keeping the days
// in [from, to) when those are set.
func (c *usageTable) sumRows(rows []*row, from, to string) (byModel, byDay map[string]*tally, total tally, files int) {
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
