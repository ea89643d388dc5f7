package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
)

// entriesPerPage is how many entries of a branch one transcript page
// shows.
const entriesPerPage = 100

type sessionPage struct {
	page
	S         sessInfo
	Entries   []entryCtx
	TreeHTML  template.HTML // the tree, rendered
	TreeURL   string
	Pinned    bool
	At        string
	ActiveURL string
	Start     int
	End       int
	Total     int
	FirstURL  string
	Earlier   string
	Later     string
	LastURL   string
	Live      bool
	EventsURL string
	LastID    string
	Holder    string
	Done      string
	Acts      actURLs
	Export    string
}

type actURLs struct {
	Fork, Branch, Label, Rename string
}

type sessInfo struct {
	Name      string
	ID        string
	Path      string
	Cwd       string
	Created   string
	Size      string
	Entries   int
	Malformed int
	ParentURL string
	Parent    string
	Children  []linkText
	Models    []usageLine
	Total     string
	Counting  bool
	Lean      bool
}

type linkText struct {
	URL, Text string
}

type usageLine struct {
	Model    string
	Messages int
	Input    string
	Output   string
	Cache    string
	Cost     string
}

// doneText says what an act that redirected to the page did.
var doneText = map[string]string{
	"fork":   "Forked: this is the new session, a copy of the branch up to the entry you chose.",
	"branch": "Branched: the session's leaf moved to the entry you chose, with your summary.",
	"label":  "Label saved.",
	"rename": "Name saved.",
}

// sessionRef resolves the store and path of a request's session.
func (h *Handler) sessionRef(r *http.Request, format layout.Format) (*storeRef, string, error) {
	st := h.storeByKey(r.PathValue("store"))
	if st == nil {
		return nil, "", errOutside
	}
	p, err := st.sessionPath(r.PathValue("rel"), format)
	return st, p, err
}

func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request) {
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	v, err := h.views.get(r.Context(), path, h.o.leanMin)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	p, err := h.sessionPage(r, v)
	if errors.Is(err, jsonl.ErrChanged) {
		// The file was rewritten between the reading and the page: once
		// more from scratch.
		h.views.drop(path)
		if v, err = h.views.get(r.Context(), path, h.o.leanMin); err == nil {
			p, err = h.sessionPage(r, v)
		}
	}
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "session", p)
}

// sessionPage makes the page of the session viewed by v.
func (h *Handler) sessionPage(r *http.Request, v *view) (*sessionPage, error) {
	q := r.URL.Query()
	self := h.sessionURL(v.path, layout.FormatJSONL)
	v.mu.RLock()
	defer v.mu.RUnlock()
	st := v.st
	ix := st.ix
	leaf, _ := ix.Leaf()
	at := q.Get("at")
	if at != "" && !ix.Has(at) {
		return nil, &engine.EntryError{Name: at}
	}
	target := leaf
	if at != "" {
		target = at
	}
	p := &sessionPage{page: h.page(r, "Session"), At: target, Pinned: at != "" && at != leaf, ActiveURL: self,
		TreeURL: strings.Replace(self, "/s/", "/tree/", 1), Done: doneText[q.Get("done")]}
	p.Acts = actURLs{Fork: actURL(self, "fork"), Branch: actURL(self, "branch"), Label: actURL(self, "label"), Rename: actURL(self, "rename")}
	p.Export = strings.Replace(self, "/s/", "/export/s/", 1)
	var branch []*jsonl.Entry
	if target != "" {
		branch = ix.Branch(target)
	}
	p.Total = len(branch)
	start, err := queryCount(q, "start", max(0, p.Total-entriesPerPage))
	if err != nil {
		return nil, err
	}
	start = max(0, min(start, p.Total-1))
	end := min(start+entriesPerPage, p.Total)
	p.Start, p.End = start, end
	pageURL := func(s int) string {
		u := url.Values{}
		if at != "" {
			u.Set("at", at)
		}
		u.Set("start", strconv.Itoa(s))
		return self + "?" + u.Encode()
	}
	if start > 0 {
		p.FirstURL = pageURL(0)
		p.Earlier = pageURL(max(0, start-entriesPerPage))
	}
	if end < p.Total {
		p.Later = pageURL(end)
		p.LastURL = pageURL(max(0, p.Total-entriesPerPage))
	}
	var shown []*jsonl.Entry
	if p.Total > 0 {
		shown = branch[start:end]
	}
	filled, err := v.filled(shown)
	if err != nil {
		return nil, err
	}
	// pi 1.x's context edits follow the messages they edit, maybe on a
	// later page: read them all, to mark the edited messages shown.
	var editEntries []*jsonl.Entry
	for _, e := range branch {
		if e.Type == jsonl.TypeContextEdit {
			editEntries = append(editEntries, e)
		}
	}
	edits := map[string]string{}
	if len(editEntries) > 0 {
		filledEdits, err := v.filled(editEntries)
		if err != nil {
			return nil, err
		}
		for _, e := range filledEdits {
			target, _ := e.StringField("targetId")
			edits[target] = contextEditHow(e)
		}
	}
	full := strings.Replace(self, "/s/", "/entry/", 1)
	forks := st.tree().forks
	for _, e := range filled {
		lb, ok := ix.Label(e.ID)
		it := entryView(e, lb, ok)
		if note, ok := edits[e.ID]; ok {
			it.Meta = strings.TrimPrefix(it.Meta+" · "+note, " · ")
		}
		it.Leaf = e.ID == leaf
		it.Forks = forks[e.ID]
		it.Full = full + "?id=" + url.QueryEscape(e.ID)
		p.Entries = append(p.Entries, entryCtx{E: it, Acts: p.Acts, CSRF: h.csrf, Self: self})
	}
	if len(filled) > 0 {
		p.LastID = filled[len(filled)-1].ID
	}
	p.Live = !p.Pinned && end == p.Total
	p.EventsURL = strings.Replace(self, "/s/", "/events/s/", 1)
	if p.TreeHTML, err = st.treeHTML(branch, leaf, target, self, v.previews); err != nil {
		return nil, err
	}
	p.S = h.sessInfo(r, v, st)
	p.Title = human.Or(p.S.Name, "Session "+h.list.get(0).shortID(v.path, p.S.ID))
	var watched bool
	if p.Holder, watched = h.watchedHolder(v.path, false); !watched {
		p.Holder = h.holderText(v.path, nil)
	}
	return p, nil
}

// actURL is the URL an act on the session page self is posted to.
func actURL(self, act string) string {
	return strings.Replace(self, "/s/", "/act/"+act+"/", 1)
}

// sessInfo is the head of a session page.
func (h *Handler) sessInfo(r *http.Request, v *view, st *viewState) sessInfo {
	si := sessInfo{Path: v.path, Cwd: st.header.Cwd, Size: human.Bytes(int(st.key.size)), Entries: st.ix.Len(),
		Malformed: st.malformed, Lean: st.lean}
	si.ID, _ = jsonl.String(mustID(&st.header.Entry))
	si.Name, _ = st.ix.Name()
	if st.header.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, st.header.Timestamp); err == nil {
			si.Created = clock(t)
		}
	}
	if st.header.HasParentSession {
		si.Parent = st.header.ParentSession
		si.ParentURL = h.sessionURL(filepath.Clean(st.header.ParentSession), layout.FormatJSONL)
	}
	if ls := h.list.get(0); ls != nil {
		if me := ls.byPath[v.path]; me != nil {
			for _, rw := range me.kids {
				si.Children = append(si.Children, linkText{URL: h.path("/" + rw.Key), Text: childName(rw)})
			}
		}
	}
	u, ok := h.usage.peek(v.path, st.key)
	if !ok && st.key.size < h.o.leanMin {
		u, _ = h.usage.get(r.Context(), v.path)
		ok = u != nil
	}
	if !ok {
		si.Counting = true
		h.usage.background(v.path)
		return si
	}
	byModel := map[string]*tally{}
	for dm, t := range u.by {
		x := byModel[dm.model]
		if x == nil {
			x = &tally{}
			byModel[dm.model] = x
		}
		x.messages += t.messages
		x.usage.Add(t.usage)
	}
	for _, m := range sortedKeys(byModel) {
		t := byModel[m]
		si.Models = append(si.Models, usageLine{Model: m, Messages: t.messages, Input: count(t.usage.Input), Output: count(t.usage.Output),
			Cache: count(t.usage.CacheRead) + " / " + count(t.usage.CacheWrite), Cost: human.Cost(t.usage.Cost.Total)})
	}
	si.Total = human.Cost(u.total.Cost.Total)
	return si
}

// childName names a fork or child of a session in its page's "forks and
// children": its session name, else its first user message on one line,
// else its short id; a name is followed by the short id, which tells
// apart forks that share their first message.
func childName(rw *row) string {
	name := rw.Name
	if name == "" && rw.First != noMessages {
		name = human.OneLine(strings.TrimSpace(rw.First), 80)
	}
	if name == "" {
		return rw.short
	}
	return name + " (" + rw.short + ")"
}

// noMessages is the first message the engine lists for a session without
// a user text (pi's).
const noMessages = "(no messages)"

// mustID returns the header's id as JSON.
func mustID(e *jsonl.Entry) []byte {
	b, _ := e.IDJSON()
	return b
}

// count formats a token count with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// serveTree answers a live page's script with the tree beside the
// transcript, as it is now (the fragment the page holds).
func (h *Handler) serveTree(w http.ResponseWriter, r *http.Request) {
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	v, err := h.views.get(r.Context(), path, h.o.leanMin)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	v.mu.RLock()
	leaf, _ := v.st.ix.Leaf()
	var branch []*jsonl.Entry
	if leaf != "" {
		branch = v.st.ix.Branch(leaf)
	}
	tree, err := v.st.treeHTML(branch, leaf, leaf, h.sessionURL(path, layout.FormatJSONL), v.previews)
	v.mu.RUnlock()
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(tree))
}

// serveEntry shows one entry whole (a page cuts long texts).
func (h *Handler) serveEntry(w http.ResponseWriter, r *http.Request) {
	_, path, err := h.sessionRef(r, layout.FormatJSONL)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	v, err := h.views.get(r.Context(), path, h.o.leanMin)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	id := r.URL.Query().Get("id")
	v.mu.RLock()
	e, ok := v.st.ix.Get(id)
	var filled []*jsonl.Entry
	if ok {
		filled, err = v.filled([]*jsonl.Entry{e})
	}
	lb, hasLabel := v.st.ix.Label(id)
	v.mu.RUnlock()
	if !ok {
		h.failPage(w, r, &engine.EntryError{Name: id})
		return
	}
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	it := entryView(filled[0], lb, hasLabel)
	for i := range it.Blocks {
		it.Blocks[i].Open = true
	}
	self := h.sessionURL(path, layout.FormatJSONL)
	h.render(w, r, http.StatusOK, "entrypage", struct {
		page
		E    entryCtx
		Back string
		Raw  string
	}{page: h.page(r, "Entry "+id), E: entryCtx{E: it}, Back: self + "?at=" + url.QueryEscape(id) + "#e-" + id, Raw: rawText(filled[0].Raw)})
}

// rawText is an entry's stored line for the entry page, indented, up to
// 16 MB.
func rawText(raw []byte) string {
	if len(raw) > 16<<20 {
		return string(raw[:16<<20]) + "\n… (" + human.Bytes(len(raw)-16<<20) + " more)"
	}
	return indentJSON(raw)
}
