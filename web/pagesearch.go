package web

import (
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
)

// The search page: 'sessctl search' in a form (the query in FTS5's syntax,
// the stores, --cwd, --since, --until, --role, --tool, --limit), through
// the same index (package search). The page is streamed: its head and the
// form go out at once, then, while the index is brought up to date, how
// far it got, then each hit as it is found.

type searchForm struct {
	Q, Cwd, Since, Until, Role, Tool string
	Limit                            int
	Stores                           []storeOpt
}

type searchHit struct {
	URL     string
	When    string
	Label   string
	Session string
	Short   string
	Cwd     string
	Store   string
	Parts   []snipPart
}

type snipPart struct {
	Text string
	Mark bool
}

func (h *Handler) serveSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := searchForm{Q: strings.TrimSpace(q.Get("q")), Cwd: strings.TrimSpace(q.Get("cwd")), Since: strings.TrimSpace(q.Get("since")),
		Until: strings.TrimSpace(q.Get("until")), Role: q.Get("role"), Tool: strings.TrimSpace(q.Get("tool")), Limit: 50}
	limit, err := queryCount(q, "limit", f.Limit)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	f.Limit = min(limit, 1000)
	picked := map[string]bool{}
	for _, k := range q["store"] {
		picked[k] = true
	}
	for _, s := range h.stores {
		f.Stores = append(f.Stores, storeOpt{Key: s.key, Name: s.Name + " (" + s.Format.String() + ")", Sel: len(picked) == 0 || picked[s.key]})
	}
	p := struct {
		page
		F searchForm
	}{page: h.page(r, "Search"), F: f}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	if err := templates.ExecuteTemplate(w, "searchhead", p); err != nil {
		h.logf("search page: %v", err)
		return
	}
	flush()
	defer func() { _ = templates.ExecuteTemplate(w, "searchfoot", p) }()
	if f.Q == "" {
		return
	}
	msg := func(text string) {
		_ = templates.ExecuteTemplate(w, "searchmsg", text)
	}
	sq := search.Query{Text: f.Q, Role: f.Role, Tool: f.Tool, Limit: f.Limit}
	switch f.Role {
	case "", search.RoleUser, search.RoleAssistant, search.RoleTool, search.RoleSystem, search.RoleOther:
	default:
		msg("Role must be user, assistant, tool, system or other.")
		return
	}
	now := h.o.Now().UTC()
	if f.Since != "" {
		if sq.Since, err = search.ParseTime(f.Since, now, false); err != nil {
			msg("Since: " + err.Error())
			return
		}
	}
	if f.Until != "" {
		if sq.Until, err = search.ParseTime(f.Until, now, true); err != nil {
			msg("Until: " + err.Error())
			return
		}
	}
	sq.Cwd = strings.TrimSuffix(f.Cwd, "/")
	if sq.Cwd == "" && f.Cwd == "/" {
		sq.Cwd = "/"
	}
	for _, s := range h.stores {
		if (len(picked) == 0 || picked[s.key]) && s.real != "" {
			sq.Stores = append(sq.Stores, layout.Place{Format: s.Format, Root: s.root})
		}
	}
	if len(sq.Stores) == 0 {
		msg("None of the stores chosen exists on this machine.")
		return
	}
	var lastProg time.Time
	progOpen := false
	x, release, err := h.searchIndex(func(done, total int64) {
		if total < 8<<20 || time.Since(lastProg) < 300*time.Millisecond {
			return // small updates say nothing
		}
		lastProg = time.Now()
		if !progOpen {
			_ = templates.ExecuteTemplate(w, "progopen", nil)
			progOpen = true
		}
		_ = templates.ExecuteTemplate(w, "progstep", progress{Done: done >> 20, All: total >> 20})
		flush()
	})
	if err != nil {
		msg(searchErr(err))
		return
	}
	defer release()
	n := 0
	served := map[string]bool{}
	for hit, err := range x.Search(r.Context(), sq) {
		if progOpen {
			_ = templates.ExecuteTemplate(w, "progclose", nil)
			progOpen = false
		}
		if err != nil {
			msg(searchErr(err))
			return
		}
		ok, known := served[hit.Session.Path]
		if !known {
			ok = h.serves(hit.Session.Path, hit.Session.Format)
			served[hit.Session.Path] = ok
		}
		if !ok {
			continue // a symbolic link, which the search follows and the viewer does not
		}
		if n == 0 {
			_ = templates.ExecuteTemplate(w, "hitsopen", nil)
		}
		n++
		if err := templates.ExecuteTemplate(w, "hit", h.hitView(&hit)); err != nil {
			return
		}
		if n%20 == 0 {
			flush()
		}
	}
	if progOpen {
		_ = templates.ExecuteTemplate(w, "progclose", nil)
	}
	if n == 0 {
		msg("No hits.")
		return
	}
	_ = templates.ExecuteTemplate(w, "hitsclose", n)
}

type progress struct{ Done, All int64 }

// searcher is the handler's search index, kept open between searches
// with a watch on the stores' directories (search.Options.Watch), so that
// a search of stores that did not change since the last one only
// queries. One search at a time uses it; a search that comes while it is
// in use, or after Close, opens an index of its own (without a watch),
// so that no request waits for another's.
type searcher struct {
	mu       sync.Mutex
	busy     bool
	closed   bool
	x        *search.Index
	progress func(done, total int64) // the search under way's
}

// searchIndex returns an index for one search, which reports its
// progress to progress; release ends the search's use of it.
func (h *Handler) searchIndex(progress func(done, total int64)) (x *search.Index, release func(), err error) {
	s := &h.search
	s.mu.Lock()
	if s.busy || s.closed {
		s.mu.Unlock()
		own, err := search.Open(h.ctx, search.Options{Dir: h.o.IndexDir, Progress: progress, FS: h.o.FS})
		if err != nil {
			return nil, nil, err
		}
		return own, func() { _ = own.Close() }, nil
	}
	if s.x == nil {
		s.x, err = search.Open(h.ctx, search.Options{Dir: h.o.IndexDir, FS: h.o.FS, Watch: true,
			Progress: func(done, total int64) {
				if s.progress != nil { // set before the search, cleared after it
					s.progress(done, total)
				}
			}})
		if err != nil {
			s.mu.Unlock()
			return nil, nil, err
		}
	}
	s.busy, s.progress = true, progress
	x = s.x
	s.mu.Unlock()
	return x, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.busy, s.progress = false, nil
		if s.closed && s.x != nil {
			_ = s.x.Close()
			s.x = nil
		}
	}, nil
}

// closeSearch closes the handler's kept index, or has the search using
// it close it when it is done.
func (h *Handler) closeSearch() error {
	s := &h.search
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.busy || s.x == nil {
		return nil
	}
	err := s.x.Close()
	s.x = nil
	return err
}

// searchErr words a search's error for the page.
func searchErr(err error) string {
	switch {
	case errors.Is(err, search.ErrQuery):
		return err.Error() + ` (words, "a phrase", prefix*, AND, OR, NOT, NEAR(a b); quote punctuation: "bytes.Split")`
	case errors.Is(err, search.ErrIndex):
		return err.Error() + " (the search index failed, so nothing is known about hits; try again)"
	case errors.Is(err, fs.ErrNotExist):
		return err.Error()
	}
	return err.Error()
}

// hitView is one hit as the page shows it: where it is, what it is, and
// the snippet cut into plain and matched parts.
func (h *Handler) hitView(hit *search.Hit) searchHit {
	v := searchHit{Label: hit.Label(), Session: hit.Session.Name, Short: h.list.get(0).shortID(hit.Session.Path, hit.Session.ID), Cwd: hit.Session.Cwd}
	if !hit.Time.IsZero() {
		v.When = clock(hit.Time)
	}
	u := h.sessionURL(hit.Session.Path, hit.Session.Format)
	if u != "" && hit.Entry != "" {
		if hit.Session.Format == layout.FormatJSONL {
			u += "?at=" + url.QueryEscape(hit.Entry) + "#e-" + url.QueryEscape(hit.Entry)
		} else {
			u += "#e-" + url.QueryEscape(hit.Entry)
		}
	}
	v.URL = u
	for _, s := range h.stores {
		if within(hit.Session.Path, s.root) {
			v.Store = s.Name
			break
		}
	}
	at := 0
	for _, m := range hit.Matches {
		if m[0] < at || m[1] > len(hit.Snippet) || m[0] > m[1] {
			continue
		}
		if m[0] > at {
			v.Parts = append(v.Parts, snipPart{Text: hit.Snippet[at:m[0]]})
		}
		v.Parts = append(v.Parts, snipPart{Text: hit.Snippet[m[0]:m[1]], Mark: true})
		at = m[1]
	}
	if at < len(hit.Snippet) {
		v.Parts = append(v.Parts, snipPart{Text: hit.Snippet[at:]})
	}
	return v
}
