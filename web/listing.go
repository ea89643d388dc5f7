package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// The listing: every session of every store, read by the engine (Store.List,
// with its list index, and agentuse.Store.List) in the background and kept
// in memory, so that the list page is served from memory whatever the
// size of the stores. A page that finds it older than Options.ListMaxAge
// starts reading the stores again and is served from the listing at hand.

// row is one listed session.
type row struct {
	Key      string // its page's path below the handler: s/STORE/REL or a/STORE/REL
	Store    *storeRef
	Format   layout.Format
	Path     string // the session file, or the AgentUse session directory
	ID       string
	Name     string // the session's name; AgentUse: the agent's name
	First    string // the first user message; AgentUse: the model
	Cwd      string
	Created  time.Time
	Modified time.Time
	Size     int64 // -1 when not known (AgentUse)
	Messages int   // -1 when not known (AgentUse)
	Parent   string
	Status   string // AgentUse's session status
	Stat     statKey

	// Set when the listing is complete:
	i      int    // the row's place in listing.rows
	up     *row   // the listed session it was forked from, or whose child it is
	kids   []*row // the listed sessions forked from it, or its children, newest first
	search string // name, first message and id, in lower case, for the text filter
	short  string // the id's prefix no other listed session shares
}

// listing is the sessions of every store at one time.
type listing struct {
	rows   []*row // newest first
	byPath map[string]*row
	at     time.Time
	took   time.Duration
	warns  []string // the first few things that could not be read
	nwarn  int
	cwds   []string // every working directory, sorted
	ids    *shortid.Set
}

// lister keeps the current listing and reads the stores again on demand,
// one reading at a time.
type lister struct {
	h       *Handler
	mu      sync.Mutex
	cur     *listing
	stale   bool
	running chan struct{} // closed when the running reading ends; nil when none runs
	loaded  atomic.Int64  // progress of the running reading
	total   atomic.Int64
}

func newLister(h *Handler) *lister { return &lister{h: h} }

// get returns the current listing, starting a new reading when there is
// none or it is too old; when there is none it waits up to wait for the
// first. It returns nil when none is ready.
func (l *lister) get(wait time.Duration) *listing {
	l.mu.Lock()
	cur := l.cur
	if l.running == nil && (cur == nil || l.stale || l.h.o.Now().Sub(cur.at) > l.h.o.ListMaxAge) {
		l.start()
	}
	running := l.running
	l.mu.Unlock()
	if cur != nil || running == nil || wait <= 0 {
		return cur
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-running:
	case <-t.C:
	case <-l.h.ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// refreshing reports whether a reading is under way, and its progress.
func (l *lister) refreshing() (bool, int64, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running != nil, l.loaded.Load(), l.total.Load()
}

// invalidate makes the next get read the stores again (after an act
// created or renamed a session), and starts it now.
func (l *lister) invalidate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stale = true
	if l.running == nil {
		l.start()
	}
}

// wait waits for the reading under way, if any, up to d.
func (l *lister) wait(d time.Duration) {
	l.mu.Lock()
	running := l.running
	l.mu.Unlock()
	if running == nil {
		return
	}
	select {
	case <-running:
	case <-time.After(d):
	case <-l.h.ctx.Done():
	}
}

// start starts a reading; l.mu is held.
func (l *lister) start() {
	done := make(chan struct{})
	l.running = done
	l.stale = false
	l.loaded.Store(0)
	l.total.Store(0)
	l.h.goBG(func() {
		ls := l.read(l.h.ctx)
		l.mu.Lock()
		if ls != nil {
			l.cur = ls
		}
		l.running = nil
		close(done)
		l.mu.Unlock()
	})
}

// read reads every store; nil when the handler was closed.
func (l *lister) read(ctx context.Context) *listing {
	t0 := time.Now()
	ls := &listing{byPath: map[string]*row{}}
	warn := func(err error) {
		ls.nwarn++
		if len(ls.warns) < 20 {
			ls.warns = append(ls.warns, err.Error())
		}
	}
	var base int64
	for _, st := range l.h.stores {
		switch st.Format {
		case layout.FormatJSONL:
			infos, err := l.h.jsonlStore(st.root).List(ctx, "", engine.ListOptions{
				NoText: true, // the rows show no message texts: neither gathered nor loaded
				Warn:   warn,
				Progress: func(loaded, total int) {
					l.loaded.Store(base + int64(loaded))
					l.total.Store(base + int64(total))
				},
			})
			base = l.loaded.Load()
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if !errors.Is(err, fs.ErrNotExist) {
					warn(err)
				}
				continue
			}
			for i := range infos {
				// The walk yields a symbolic link as a session file
				// (pi lists it); the viewer serves none.
				if fi, err := l.h.fs().Lstat(infos[i].Path); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				if r := jsonlRow(st, &infos[i]); r != nil {
					ls.add(r)
				}
			}
		case layout.FormatAgentUse:
			// Every session below the root, at any depth, as
			// agentuse.Walk finds them (no links, no .trash).
			aus, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: st.root, FS: l.h.fs()})
			if err != nil {
				warn(err)
				continue
			}
			list, err := aus.List(ctx, agentuse.ListOptions{Subagents: true, Warn: warn})
			_ = aus.Close()
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				warn(err)
				continue
			}
			for _, x := range list {
				if r := agentUseRow(st, x); r != nil {
					ls.add(r)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	slices.SortStableFunc(ls.rows, func(a, b *row) int { return b.Modified.Compare(a.Modified) })
	ls.ids = &shortid.Set{}
	for _, r := range ls.rows {
		if r.Format == layout.FormatJSONL {
			ls.ids.Add(r.Path, r.ID)
		} else {
			ls.ids.Add("", r.ID)
		}
	}
	for i, r := range ls.rows {
		r.i = i
		r.short = ls.ids.Short(r.ID)
		r.search = strings.ToLower(r.Name + "\n" + r.First + "\n" + r.ID)
		if p := ls.byPath[r.Parent]; r.Parent != "" && p != nil && p != r {
			r.up = p
			p.kids = append(p.kids, r) // in the listing's order: newest first
		}
	}
	// Sessions naming each other as parents (hand-made files) would hang
	// under each other and nowhere else: such a loop is cut.
	for _, r := range ls.rows {
		x := r.up
		for steps := 0; x != nil && x != r && steps < len(ls.rows); steps++ {
			x = x.up
		}
		if x == r {
			r.up.kids = slices.DeleteFunc(r.up.kids, func(k *row) bool { return k == r })
			r.up = nil
		}
	}
	seen := map[string]bool{}
	for _, r := range ls.rows {
		if r.Cwd != "" && !seen[r.Cwd] {
			seen[r.Cwd] = true
			ls.cwds = append(ls.cwds, r.Cwd)
		}
	}
	slices.Sort(ls.cwds)
	ls.at = l.h.o.Now()
	ls.took = time.Since(t0)
	return ls
}

// shortID returns the prefix of id no listed session shares but the one
// at path; the first eight characters when there is no listing yet.
func (ls *listing) shortID(path, id string) string {
	if ls == nil {
		return render.ShortID(id)
	}
	if r := ls.byPath[path]; r != nil && r.ID == id {
		return r.short
	}
	return ls.ids.Short(id)
}

func (ls *listing) add(r *row) {
	if _, dup := ls.byPath[r.Path]; dup {
		return // a store inside another: listed once
	}
	ls.byPath[r.Path] = r
	ls.rows = append(ls.rows, r)
}

// jsonlRow makes the row of a listed session file.
func jsonlRow(st *storeRef, in *engine.Info) *row {
	rel, ok := st.relOf(in.Path)
	if !ok {
		return nil
	}
	r := &row{Key: "s/" + st.key + "/" + escapeRel(rel), Store: st, Format: layout.FormatJSONL, Path: in.Path,
		ID: in.ID, Cwd: in.Cwd, Modified: in.Modified, Size: in.Size, Messages: in.MessageCount,
		First: in.FirstMessage, Stat: statKey{size: in.Size, mtime: in.ModTime.UnixNano()}}
	if in.HasName {
		r.Name = in.Name
	}
	if in.CreatedValid {
		r.Created = in.Created
	}
	if in.ParentSessionPath != "" {
		r.Parent = filepath.Clean(in.ParentSessionPath)
	}
	return r
}

// agentUseRow makes the row of a listed AgentUse session.
func agentUseRow(st *storeRef, x *agentuse.Info) *row {
	rel, ok := st.relOf(x.Dir)
	if !ok {
		return nil
	}
	r := &row{Key: "a/" + st.key + "/" + escapeRel(rel), Store: st, Format: layout.FormatAgentUse, Path: x.Dir,
		ID: x.ID, Name: x.AgentName, First: x.Model, Size: -1, Messages: -1, Status: x.Status}
	if r.Name == "" {
		r.Name = x.AgentID
	}
	if x.Created > 0 {
		r.Created = time.UnixMilli(x.Created)
	}
	r.Modified = r.Created
	if x.Updated > 0 {
		r.Modified = time.UnixMilli(x.Updated)
	}
	if x.Parent != nil {
		r.Parent = x.Parent.Dir
	}
	var doc struct {
		Project struct {
			Cwd string `json:"cwd"`
		} `json:"project"`
	}
	if json.Unmarshal(x.Raw, &doc) == nil {
		r.Cwd = doc.Project.Cwd
	}
	return r
}

// escapeRel escapes a '/'-separated relative path for a URL path, each
// element on its own.
func escapeRel(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = pathEscape(p)
	}
	return strings.Join(parts, "/")
}

// provCache remembers which agent an imported session came from (the
// sessctl-import entry that begins it), read for the rows a page shows.
type provCache struct {
	fsys vfs.FS
	mu   sync.Mutex
	m    map[string]provEntry
}

type provEntry struct {
	created time.Time
	source  string
}

func newProvCache(fsys vfs.FS) *provCache { return &provCache{fsys: fsys, m: map[string]provEntry{}} }

// fs returns the filesystem the handler reads through (Options.FS).
func (h *Handler) fs() vfs.FS { return h.o.FS }

// source returns the agent the session file at path was imported from, ""
// when it was not imported. It reads the file's first two lines, at most
// 64 KB.
func (c *provCache) source(r *row) string {
	c.mu.Lock()
	e, ok := c.m[r.Path]
	c.mu.Unlock()
	if ok && e.created.Equal(r.Created) {
		return e.source
	}
	src := readImportSource(c.fsys, r.Path)
	c.mu.Lock()
	if len(c.m) > 100000 {
		clear(c.m)
	}
	c.m[r.Path] = provEntry{created: r.Created, source: src}
	c.mu.Unlock()
	return src
}

// readImportSource returns data.source of a sessctl-import custom entry
// on the second line of the file, "" when there is none.
func readImportSource(fsys vfs.FS, path string) string {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if _, err := br.ReadSlice('\n'); err != nil {
		return ""
	}
	line, err := br.ReadSlice('\n')
	if err != nil || !bytes.Contains(line, []byte(`"sessctl-import"`)) {
		return ""
	}
	e, err := jsonl.ParseEntry(bytes.TrimRight(line, "\r\n"))
	if err != nil || e.Type != "custom" {
		return ""
	}
	if ct, _ := e.StringField("customType"); ct != "sessctl-import" {
		return ""
	}
	data, ok := e.Field("data")
	if !ok {
		return ""
	}
	v, ok := jsonl.Lookup(data, "source")
	if !ok {
		return ""
	}
	s, _ := jsonl.String(v)
	return s
}
