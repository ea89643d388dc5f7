package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
)

// groupsPerPage is how many sessions without a listed parent one page of
// the list shows (each with its children and forks).
const groupsPerPage = 100

// listFilter is what the list page is asked to show.
type listFilter struct {
	Cwd   string
	From  string // a date (or anything search.ParseTime takes): modified at or after
	To    string // modified before the end of that day
	Store string // a store's key; "" all
	Q     string // a text in the name, first message or id
	Page  int
}

// listRow is one row of the list page.
type listRow struct {
	Depth   int
	Child   bool
	URL     string
	Name    string
	First   string
	Short   string
	When    string
	Full    string
	Cwd     string
	Agent   string
	Msgs    string
	Size    string
	Cost    string
	CostKey string
	Status  string
}

type listPage struct {
	page
	F          listFilter
	FilterErr  string
	Cwds       []string
	StoreOpts  []storeOpt
	Rows       []listRow
	Count      int
	Total      int
	Filtered   bool
	AsOf       string
	Took       string
	Refreshing bool
	Warns      []string
	NWarn      int
	Prev, Next string
}

type storeOpt struct {
	Key, Name string
	Sel       bool
}

func (h *Handler) serveList(w http.ResponseWriter, r *http.Request) {
	ls := h.list.get(150 * time.Millisecond)
	if ls == nil {
		_, loaded, total := h.list.refreshing()
		lp := loadingPage{page: h.page(r, "Sessions"), What: "Reading the stores", Done: loaded, All: total}
		lp.Refresh = 2
		h.render(w, r, http.StatusOK, "loading", lp)
		return
	}
	q := r.URL.Query()
	pageNo, err := queryCount(q, "page", 0)
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	f := listFilter{Cwd: strings.TrimSpace(q.Get("cwd")), From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")),
		Store: q.Get("store"), Q: strings.TrimSpace(q.Get("q"))}
	f.Page = pageNo
	p := listPage{page: h.page(r, "Sessions"), F: f, Cwds: ls.cwds, Total: len(ls.rows), NWarn: ls.nwarn, Warns: ls.warns}
	for _, s := range h.stores {
		p.StoreOpts = append(p.StoreOpts, storeOpt{Key: s.key, Name: s.Name + " (" + s.Format.String() + ")", Sel: s.key == f.Store})
	}
	now := h.o.Now()
	var from, to time.Time
	if f.From != "" {
		if from, err = search.ParseTime(f.From, now, false); err != nil {
			p.FilterErr = "From: " + err.Error()
		}
	}
	if f.To != "" {
		if to, err = search.ParseTime(f.To, now, true); err != nil {
			p.FilterErr = "To: " + err.Error()
		}
	}
	ql := strings.ToLower(f.Q)
	keep := make([]bool, len(ls.rows))
	count := 0
	for _, rw := range ls.rows {
		if f.Store != "" && rw.Store.key != f.Store {
			continue
		}
		if !underCwd(rw.Cwd, f.Cwd) {
			continue
		}
		if !from.IsZero() && rw.Modified.Before(from) {
			continue
		}
		if !to.IsZero() && !rw.Modified.Before(to) {
			continue
		}
		if ql != "" && !strings.Contains(rw.search, ql) {
			continue
		}
		keep[rw.i] = true
		count++
	}
	p.Count = count
	p.Filtered = count != len(ls.rows)
	// Sessions whose parent is not shown are shown at the top level;
	// the others under their parent.
	var roots []*row
	for _, rw := range ls.rows {
		if keep[rw.i] && (rw.up == nil || !keep[rw.up.i]) {
			roots = append(roots, rw)
		}
	}
	lo := len(roots)
	if f.Page <= len(roots)/groupsPerPage { // no overflow
		lo = min(f.Page*groupsPerPage, len(roots))
	}
	hi := min(lo+groupsPerPage, len(roots))
	seen := map[*row]bool{}
	for _, rt := range roots[lo:hi] {
		h.addRows(&p.Rows, rt, keep, 0, seen)
	}
	link := func(page int) string {
		v := url.Values{}
		for k, x := range map[string]string{"cwd": f.Cwd, "from": f.From, "to": f.To, "store": f.Store, "q": f.Q} {
			if x != "" {
				v.Set(k, x)
			}
		}
		if page > 0 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return h.path("/")
		}
		return h.path("/?" + v.Encode())
	}
	if f.Page > 0 {
		p.Prev = link(f.Page - 1)
	}
	if hi < len(roots) {
		p.Next = link(f.Page + 1)
	}
	p.AsOf = ls.at.Local().Format("15:04:05")
	p.Took = ls.took.Round(time.Millisecond).String()
	p.Refreshing, _, _ = h.list.refreshing()
	h.render(w, r, http.StatusOK, "list", p)
}

// underCwd reports whether a session of cwd is kept by the filter dir: dir
// itself or below it ("" and "/" keep every session).
func underCwd(cwd, dir string) bool {
	dir = strings.TrimRight(dir, "/")
	return dir == "" || cwd == dir || strings.HasPrefix(cwd, dir+"/")
}

// addRows adds r and, below it, its children and forks that are kept.
func (h *Handler) addRows(out *[]listRow, r *row, keep []bool, depth int, seen map[*row]bool) {
	if seen[r] {
		return // a parent loop: shown once
	}
	seen[r] = true
	*out = append(*out, h.listRowOf(r, depth))
	for _, k := range r.kids {
		if keep[k.i] {
			h.addRows(out, k, keep, depth+1, seen)
		}
	}
}

// listRowOf is the list page's view of a row.
func (h *Handler) listRowOf(r *row, depth int) listRow {
	lr := listRow{Depth: min(depth, 8), Child: depth > 0, URL: h.path("/" + r.Key), Name: r.Name, First: human.OneLine(r.First, 120),
		Short: r.short, Cwd: r.Cwd, Msgs: "—", Size: "—", Cost: "—", Status: r.Status}
	if !r.Modified.IsZero() {
		lr.When = r.Modified.Local().Format("2006-01-02 15:04")
		lr.Full = r.Modified.Local().Format(time.RFC3339)
	}
	if r.Messages >= 0 {
		lr.Msgs = strconv.Itoa(r.Messages)
	}
	if r.Size >= 0 {
		lr.Size = human.Bytes(int(r.Size))
	}
	switch r.Format {
	case layout.FormatJSONL:
		lr.Agent = r.Store.Name // pi, indusagi
		if r.Store.key != r.Store.Name {
			lr.Agent = r.Format.String() // a directory's
		}
		if src := h.prov.source(r); src != "" {
			lr.Agent = "imported: " + src
		}
		if u, ok := h.usage.peek(r.Path, r.Stat); ok {
			lr.Cost = costText(u)
		} else {
			lr.Cost = "…"
			lr.CostKey = r.Key
		}
	case layout.FormatAgentUse:
		lr.Agent = r.Format.String()
		if r.Status != "" {
			lr.Agent += " (" + r.Status + ")"
		}
	}
	return lr
}

// costText is the cost column of a file's counts.
func costText(u *fileUsage) string {
	if u.msgs == 0 {
		return "—"
	}
	if u.total.Cost.Total == 0 {
		return human.Cost(0)
	}
	return human.Cost(u.total.Cost.Total)
}

// serveUsage answers the list page's script with the cost of the
// sessions it names (?k=s/STORE/REL, up to 200), as a JSON object.
func (h *Handler) serveUsage(w http.ResponseWriter, r *http.Request) {
	keys := r.URL.Query()["k"]
	if len(keys) > 200 {
		keys = keys[:200]
	}
	out := map[string]string{}
	for _, k := range keys {
		store, rel, ok := strings.Cut(strings.TrimPrefix(k, "s/"), "/")
		if !ok || !strings.HasPrefix(k, "s/") {
			continue
		}
		st := h.storeByKey(store)
		if st == nil {
			continue
		}
		rel, err := url.PathUnescape(rel)
		if err != nil {
			continue
		}
		p, err := st.sessionPath(rel, layout.FormatJSONL)
		if err != nil {
			continue
		}
		u, err := h.usage.get(r.Context(), p)
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			out[k] = "?"
			continue
		}
		out[k] = costText(u)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
