package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/lock"
)

// Live pages. A session page that shows the end of the active branch opens
// an event stream (server-sent events) here: the entries the engine's
// follow of the file (engine.Tail.Follow, which reads only what is
// appended, every FollowInterval) yields are sent as they come, each
// rendered as the transcript renders it, and the page appends those that
// continue the branch it shows. The stream also says who is writing the
// session, whenever that changes:
//
//   - the writer lock's holder, from its owner record ("written by pid
//     4821 (sessctl) on devbox since 10:22"); the record is read when it
//     appears, changes or goes away, and the kernel lock is probed
//     (lock.Inspect) only then, since a probe is an instant in which
//     another writer's open would fail;
//   - pi takes no lock: a file that grows while nobody holds the lock is
//     being written by a lock-less writer, and on Linux the processes
//     that have it open for writing are named (lock.FileWriters; pi opens
//     the file only while it appends a line, so it is seen only then).

// Who writes a session is watched once for all the live streams of it
// (holderHub): one goroutine per watched session looks at it every
// holderEvery, which costs a stat of the session file and an lstat of the
// owner record, and looks up the writer only when one of them changed:
// the kernel lock is probed (lock.Inspect) when the owner record
// appears, changes or goes away (and every holderRecheck while there is
// one: its holder may have died without removing it), and /proc is
// scanned for the processes that have the file open for writing
// (lock.FileWriters) when the file changed while no lock is held. An
// idle session costs no lookup, however many streams follow it; a stream
// that gets new entries has the session looked at at once.

// holderState is what a live page last said about the writer.
type holderState struct {
	owner   string    // the owner record's stat, "" when absent
	probed  time.Time // when the kernel lock was last probed
	locked  string    // the text for the lock's holder, "" when not locked
	grewAt  time.Time // when the file last grew while not locked
	writers string    // the processes last seen writing without the lock
	seenAt  time.Time // when they were seen
	size    int64     // the file's size at the last look, -1 before the first
	mtime   int64     // its modification time then
}

// holderText says who is writing the session file at path now. st, when
// not nil, is the state of the previous call for the same session, which
// it updates; the writer is looked up only when something changed since
// then.
func (h *Handler) holderText(path string, st *holderState) string {
	if st == nil {
		st = &holderState{size: -1}
	}
	h.holderChecks.Add(1)
	lp := sessionfile.LockPath(path)
	wasLocked := st.locked != ""
	h.probeLock(lp, st)
	fi, err := h.o.FS.Stat(path)
	if err == nil {
		changed := st.size < 0 || fi.Size() != st.size || fi.ModTime().UnixNano() != st.mtime
		// Growth is put down to a lock-less writer only when no lock was
		// held at this look nor the one before.
		if st.size >= 0 && fi.Size() != st.size && st.locked == "" && !wasLocked {
			st.grewAt = h.o.Now()
		}
		st.size, st.mtime = fi.Size(), fi.ModTime().UnixNano()
		// pi opens the file only while it appends a line, so it can be
		// seen only about when the file changes.
		if changed && st.locked == "" {
			h.lookups.Add(1)
			if ws, known := lock.FileWriters(fi); known && len(ws) > 0 {
				st.writers, st.seenAt = lock.WritersText(ws), h.o.Now()
			}
		}
	}
	return st.text(h.o.Now())
}

// probeLock updates st.locked from the lock file lp's owner record, probing
// the kernel lock only when the record changed, or every holderRecheck
// while there is one.
func (h *Handler) probeLock(lp string, st *holderState) {
	op := lock.OwnerPath(lp)
	rec := ""
	if fi, err := h.o.FS.Lstat(op); err == nil {
		rec = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	now := h.o.Now()
	if rec == st.owner && (rec == "" || now.Sub(st.probed) < h.o.holderRecheck) {
		return
	}
	st.owner = rec
	if rec == "" {
		st.locked = ""
		return
	}
	st.probed = now
	h.lookups.Add(1)
	ls, err := lock.Inspect(lp)
	switch {
	case err != nil || !ls.Locked:
		st.locked = ""
	case ls.Owner == nil:
		st.locked = "written by a process that holds the writer lock and left no owner record"
	default:
		st.locked = holderOf(ls.Owner, ls.Stale, ls.Reason)
	}
}

// holderHub is the sessions watched for their writer, by key ("s:" and a
// session file, "a:" and an AgentUse session directory).
type holderHub struct {
	mu sync.Mutex
	m  map[string]*holderWatch
}

// holderWatch is one watched session: what its streams are told about
// its writer.
type holderWatch struct {
	refs  int           // the streams following it (holderHub.mu)
	ready chan struct{} // closed once the first look is done
	poke  chan struct{} // a look now, please (capacity 1)
	done  chan struct{} // closed when the last stream is gone

	mu      sync.Mutex
	text    string
	changed chan struct{} // closed, and replaced, when text changes
}

// watchHolder returns the watch of the session at path (a session file,
// or with agentUse an AgentUse session directory), started for the
// first stream, and the function that ends the stream's use of it; the
// watch stops with its last stream.
func (h *Handler) watchHolder(path string, agentUse bool) (*holderWatch, func()) {
	key, look := "s:"+path, func(st *holderState) string { return h.holderText(path, st) }
	if agentUse {
		key, look = "a:"+path, func(st *holderState) string { return h.agentUseHolder(path, st) }
	}
	hub := &h.holders
	hub.mu.Lock()
	w := hub.m[key]
	if w == nil {
		w = &holderWatch{ready: make(chan struct{}), poke: make(chan struct{}, 1), done: make(chan struct{}), changed: make(chan struct{})}
		if hub.m == nil {
			hub.m = map[string]*holderWatch{}
		}
		hub.m[key] = w
		h.goBG(func() { h.runWatch(w, look) })
	}
	w.refs++
	hub.mu.Unlock()
	var once sync.Once
	return w, func() {
		once.Do(func() {
			hub.mu.Lock()
			defer hub.mu.Unlock()
			if w.refs--; w.refs == 0 {
				delete(hub.m, key)
				close(w.done)
			}
		})
	}
}

// runWatch looks at a watched session until its last stream is gone.
func (h *Handler) runWatch(w *holderWatch, look func(*holderState) string) {
	st := &holderState{size: -1}
	w.set(look(st))
	close(w.ready)
	tick := time.NewTicker(h.o.holderEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-h.ctx.Done():
			return
		case <-tick.C:
		case <-w.poke:
		}
		w.set(look(st))
	}
}

func (w *holderWatch) set(t string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t != w.text {
		w.text = t
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

// current returns what the watch says now, and a channel closed when
// that changes.
func (w *holderWatch) current() (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text, w.changed
}

// lookNow has the session looked at soon (after new entries), without
// waiting; looks asked for by many streams at once are one look.
func (w *holderWatch) lookNow() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// watchedHolder returns what the watch of a session says, when it is
// watched (a live page of it is open), else false.
func (h *Handler) watchedHolder(path string, agentUse bool) (string, bool) {
	key := "s:" + path
	if agentUse {
		key = "a:" + path
	}
	h.holders.mu.Lock()
	w := h.holders.m[key]
	h.holders.mu.Unlock()
	if w == nil {
		return "", false
	}
	select {
	case <-w.ready:
		t, _ := w.current()
		return t, true
	default:
		return "", false
	}
}

// holderOf words a lock's owner record.
func holderOf(o *lock.Owner, stale bool, reason string) string {
	s := fmt.Sprintf("written by pid %d (%s) on %s since %s", o.PID, o.Command, o.Host, o.Since.Local().Format("15:04"))
	if stale {
		s += " — the record is stale (" + reason + "); another process holds the lock"
	}
	return s
}

// text is the line a page shows.
func (st *holderState) text(now time.Time) string {
	switch {
	case st.locked != "":
		return st.locked
	case st.writers != "" && now.Sub(st.seenAt) < 2*time.Minute:
		return "written without a writer lock (pi takes none) by " + st.writers + lastGrew(st.grewAt, now)
	case !st.grewAt.IsZero() && now.Sub(st.grewAt) < 2*time.Minute:
		return "written while no writer lock was held: a writer that takes none, such as pi, whose process cannot be told" + lastGrew(st.grewAt, now)
	}
	return "no writer holds the lock"
}

func lastGrew(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "; last append at " + t.Local().Format("15:04:05")
}

// liveEntry is one entry a live page gets: its place in the tree and its
// transcript HTML.
type liveEntry struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
	Leaf   bool   `json:"leaf"`
	Target string `json:"target,omitempty"` // a label's target
	Label  string `json:"label,omitempty"`
	Name   string `json:"name,omitempty"` // a session_info's name
	HTML   string `json:"html"`
}

// serveEvents is the event stream of a live JSONL session page.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	tail, err := h.jsonlStore(filepath.Dir(path)).Tail(ctx, path, 1)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer tail.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) bool {
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		fl.Flush()
		return err == nil
	}
	hw, release := h.watchHolder(path, false)
	defer release()
	select {
	case <-hw.ready:
	case <-ctx.Done():
		return
	case <-h.ctx.Done():
		return
	}
	last, holderChanged := hw.current()
	if !send("holder", last) {
		return
	}
	got := make(chan *jsonl.Entry, 64)
	failed := make(chan error, 1)
	go func() {
		defer close(got)
		for e, err := range tail.Follow(ctx, h.o.FollowInterval) {
			if err != nil {
				failed <- err
				return
			}
			select {
			case got <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			return
		case err := <-failed:
			msg := err.Error()
			if errors.Is(err, engine.ErrVanished) {
				msg = "the session file was removed or replaced"
			}
			send("gone", msg)
			return
		case e, ok := <-got:
			if !ok {
				return
			}
			batch := []*jsonl.Entry{e}
		more:
			for len(batch) < 200 {
				select {
				case e, ok := <-got:
					if !ok {
						break more
					}
					batch = append(batch, e)
				default:
					break more
				}
			}
			if !h.sendEntries(r, path, batch, send) {
				return
			}
			hw.lookNow()
		case <-holderChanged:
			var t string
			t, holderChanged = hw.current()
			if t != last {
				last = t
				if !send("holder", t) {
					return
				}
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// sendEntries renders new entries as the transcript does, with the
// session's labels as they are now, and sends them.
func (h *Handler) sendEntries(r *http.Request, path string, batch []*jsonl.Entry, send func(string, any) bool) bool {
	v, err := h.views.get(r.Context(), path, h.o.leanMin)
	var out []liveEntry
	leaf := ""
	if err == nil {
		v.mu.RLock()
		leaf, _ = v.st.ix.Leaf()
		v.mu.RUnlock()
	}
	self := h.sessionURL(path, layout.FormatJSONL)
	full := strings.Replace(self, "/s/", "/entry/", 1)
	for _, e := range batch {
		le := liveEntry{ID: e.ID, Parent: e.ParentID, Leaf: e.ID == leaf}
		lb, ok := "", false
		if v != nil {
			v.mu.RLock()
			lb, ok = v.st.ix.Label(e.ID)
			v.mu.RUnlock()
		}
		it := entryView(e, lb, ok)
		it.Full = full + "?id=" + e.ID
		it.Leaf = le.Leaf
		switch e.Type {
		case jsonl.TypeLabel:
			le.Target, _ = e.StringField("targetId")
			le.Label, _ = e.StringField("label")
		case jsonl.TypeSessionInfo:
			n, _ := e.StringField("name")
			le.Name = strings.TrimSpace(n)
		}
		var buf bytes.Buffer
		if err := templates.ExecuteTemplate(&buf, "entryfrag", entryCtx{E: it, CSRF: h.csrf, Self: self,
			Acts: actURLs{Fork: actURL(self, "fork"), Branch: actURL(self, "branch"), Label: actURL(self, "label"), Rename: actURL(self, "rename")}}); err != nil {
			h.logf("render an entry of %s: %v", path, err)
			continue
		}
		le.HTML = buf.String()
		out = append(out, le)
	}
	return send("entries", out)
}

// agentUseLockPath is the writer lock of an AgentUse session directory.
func agentUseLockPath(dir string) string { return filepath.Join(dir, layout.AgentUseLockFile) }

// agentUseHolder says who holds an AgentUse session's writer lock.
func (h *Handler) agentUseHolder(dir string, st *holderState) string {
	if st == nil {
		st = &holderState{size: -1}
	}
	h.holderChecks.Add(1)
	h.probeLock(agentUseLockPath(dir), st)
	if st.locked != "" {
		return st.locked
	}
	return "no writer holds the lock"
}
