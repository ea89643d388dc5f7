package web

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
)

// The stats page: the tokens and cost of the assistant messages of every
// JSONL session (pi, indusagi, imported), per model and per day, as the
// sessions report them in their usage (what 'sessctl stats' adds up).
// engine/stats counts them (stats.Dir, in the background, at most every
// 30 seconds): its stats index in the cache directory keeps what each
// unchanged file spent per day and model, so that only the files that
// changed are read again, in this viewer or the next; the page says how
// far the counting got. AgentUse records no cost and is not counted.

type statsPage struct {
	page
	F        statsFilter
	Cwds     []string
	Models   []statRow
	Days     []statRow
	Total    statRow
	Files    int
	Sessions int
	Running  bool
	Done     int64
	All      int64
	At       string
}

type statsFilter struct {
	Cwd, From, To string
}

type statRow struct {
	Key      string
	Messages int
	Input    string
	Output   string
	Cache    string
	Tokens   string
	Cost     string
	CostV    float64
	Max      float64
}

func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	ls := h.list.get(150 * time.Millisecond)
	if ls == nil {
		_, loaded, total := h.list.refreshing()
		lp := loadingPage{page: h.page(r, "Stats"), What: "Reading the stores", Done: loaded, All: total}
		lp.Refresh = 2
		h.render(w, r, http.StatusOK, "loading", lp)
		return
	}
	h.usage.scanStores(ls, 30*time.Second)
	q := r.URL.Query()
	f := statsFilter{Cwd: strings.TrimSpace(q.Get("cwd")), From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to"))}
	p := statsPage{page: h.page(r, "Stats"), F: f, Cwds: ls.cwds}
	var rows []*row
	for _, rw := range ls.rows {
		if rw.Format != layout.FormatJSONL {
			continue
		}
		if !underCwd(rw.Cwd, f.Cwd) {
			continue
		}
		rows = append(rows, rw)
	}
	p.Sessions = len(rows)
	to := f.To
	if to != "" {
		// The days up to and including To.
		if t, err := time.Parse("2006-01-02", to); err == nil {
			to = t.AddDate(0, 0, 1).Format("2006-01-02")
		}
	}
	byModel, byDay, total, files := h.usage.sumRows(rows, f.From, to)
	p.Files = files
	p.Total = statRowOf("all", &total)
	for _, m := range sortedKeys(byModel) {
		p.Models = append(p.Models, statRowOf(m, byModel[m]))
	}
	slices.SortStableFunc(p.Models, func(a, b statRow) int {
		switch {
		case a.CostV > b.CostV:
			return -1
		case a.CostV < b.CostV:
			return 1
		}
		return 0
	})
	days := sortedKeys(byDay)
	slices.Reverse(days)
	maxCost := 0.0
	for _, d := range days {
		sr := statRowOf(d, byDay[d])
		maxCost = max(maxCost, sr.CostV)
		p.Days = append(p.Days, sr)
	}
	for i := range p.Days {
		p.Days[i].Max = maxCost
	}
	var at time.Time
	p.Running, p.Done, p.All, at = h.usage.scanState()
	if !at.IsZero() {
		p.At = at.Local().Format("15:04:05")
	}
	if p.Running {
		p.Refresh = 2
	}
	h.render(w, r, http.StatusOK, "stats", p)
}

func statRowOf(key string, t *tally) statRow {
	u := t.usage
	return statRow{Key: key, Messages: t.messages, Input: count(u.Input), Output: count(u.Output),
		Cache: count(u.CacheRead) + " / " + count(u.CacheWrite), Tokens: count(u.TotalTokens),
		Cost: human.Cost(u.Cost.Total), CostV: u.Cost.Total}
}
