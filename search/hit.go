package search

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Label names what a hit is, for people: "user", "assistant",
// "thinking", "tool call bash", "branch summary", ...
func (h *Hit) Label() string {
	switch h.Kind {
	case KindText:
		return "assistant"
	case KindToolCall:
		return "tool call " + h.Tool
	case KindToolResult:
		return "tool result " + h.Tool
	case KindTool:
		return "tool " + h.Tool
	case KindBranchSummary:
		return "branch summary"
	case KindName:
		return "session name"
	case KindContextEdit:
		return "context edit"
	}
	return h.Kind.String()
}

// HitJSON is the JSON shape of a hit (what 'sessctl search --json' prints
// of it, before the command line that shows it).
type HitJSON struct {
	Session struct {
		Path   string `json:"path"`
		ID     string `json:"id"`
		Name   string `json:"name"`
		Cwd    string `json:"cwd"`
		Format string `json:"format"`
	} `json:"session"`
	Entry     string   `json:"entry"`
	File      string   `json:"file"`
	Offset    int64    `json:"offset"`
	Role      string   `json:"role"`
	Kind      string   `json:"kind"`
	Tool      string   `json:"tool,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Snippet   string   `json:"snippet"`
	Matches   [][2]int `json:"matches"`
}

// JSON returns the hit in its JSON shape: the time in UTC with
// milliseconds (left out when the entry has none), matches never null.
func (h *Hit) JSON() *HitJSON {
	var j HitJSON
	j.Session.Path, j.Session.ID, j.Session.Name, j.Session.Cwd, j.Session.Format = h.Session.Path, h.Session.ID, h.Session.Name, h.Session.Cwd, h.Session.Format.String()
	j.Entry, j.File, j.Offset, j.Role, j.Kind, j.Tool = h.Entry, h.File, h.Offset, h.Role, h.Kind.String(), h.Tool
	if !h.Time.IsZero() {
		j.Timestamp = h.Time.Format("2006-01-02T15:04:05.000Z07:00")
	}
	j.Snippet, j.Matches = h.Snippet, h.Matches
	if j.Matches == nil {
		j.Matches = [][2]int{}
	}
	return &j
}

// ParseTime parses a bound of Query.Since or Query.Until as people write
// it: a date (UTC), a date and time, an RFC 3339 time, or an age (7d,
// 12h, 30m, 2w, 90s) before now. With upper, a bare date means the end of
// that day.
func ParseTime(s string, now time.Time, upper bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 {
		unit := map[byte]time.Duration{'w': 7 * 24 * time.Hour, 'd': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}[s[n-1]]
		if v, err := strconv.ParseFloat(s[:n-1], 64); err == nil && unit != 0 && v >= 0 {
			return now.Add(-time.Duration(v * float64(unit))), nil
		}
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		if upper {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date: use 2026-03-01, 2026-03-01T09:30, an RFC 3339 time or an age such as 7d or 12h", s)
}
