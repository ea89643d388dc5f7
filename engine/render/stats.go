package render

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
)

// SessionStats is what 'sessctl stats' reports of one session: the
// counts of the whole file and of its active branch. Name and Leaf are
// nil for a session without a name or without entries. Its JSON is the
// document of 'sessctl stats --json'.
type SessionStats struct {
	Path   string       `json:"path"`
	ID     string       `json:"id"`
	Name   *string      `json:"name"`
	Leaf   *string      `json:"leaf"`
	All    *stats.Scope `json:"all"`
	Branch *stats.Scope `json:"branch"`
}

// NewSessionStats returns the report of a session (a Snapshot or
// SnapshotView) with the counts of its file and its branch
// (stats.CountView): its name and leaf are null where it has none.
func NewSessionStats(s *Session, all, branch *stats.Scope) SessionStats {
	rep := SessionStats{Path: s.Path, ID: s.Header.ID, All: all, Branch: branch}
	if s.HasName {
		rep.Name = &s.Name
	}
	if s.Leaf != "" {
		rep.Leaf = &s.Leaf
	}
	return rep
}

// SessionStatsText writes the report as the text of 'sessctl stats': the
// session, the counts of the file and the branch side by side, and the
// tokens and cost per model of each.
func SessionStatsText(w io.Writer, r *SessionStats) error {
	ew := &errWriter{w: w}
	w = ew
	fmt.Fprintf(w, "Session  %s\n", human.QuotePath(r.ID))
	if r.Name != nil {
		fmt.Fprintf(w, "Name     %s\n", human.OneLineName(*r.Name, 100))
	}
	fmt.Fprintf(w, "File     %s\n", human.QuotePath(r.Path))
	if r.Leaf != nil {
		fmt.Fprintf(w, "Leaf     %s\n", *r.Leaf)
	} else {
		fmt.Fprintf(w, "Leaf     none\n")
	}
	fmt.Fprintln(w)
	writeScopeTable(w, []string{"FILE", "BRANCH"}, []*stats.Scope{r.All, r.Branch})
	writeModelTable(w, "Per model, whole file", r.All)
	writeModelTable(w, "Per model, active branch", r.Branch)
	return ew.err
}

// StoreStats is what 'sessctl stats --all' reports of a store: the
// counts of every session file in it. Its JSON is the document of
// 'sessctl stats --all --json'.
type StoreStats struct {
	Store    string       `json:"store"`
	Sessions int          `json:"sessions"`
	Skipped  int          `json:"skipped"`
	All      *stats.Scope `json:"all"`
	// AgentUse counts the AgentUse sessions below Store, whose usage is
	// not in All; nil leaves it out (a store that holds none by name).
	AgentUse *int `json:"agentUseSessions,omitempty"`
}

// StoreStatsText writes the report as the text of 'sessctl stats --all'.
func StoreStatsText(w io.Writer, r *StoreStats) error {
	ew := &errWriter{w: w}
	w = ew
	fmt.Fprintf(w, "Store     %s\n", human.QuotePath(r.Store))
	fmt.Fprintf(w, "Sessions  %d", r.Sessions)
	if r.Skipped > 0 {
		fmt.Fprintf(w, " (%s skipped)", human.Plural(r.Skipped, "file", "files"))
	}
	fmt.Fprintf(w, "\n\n")
	writeScopeTable(w, []string{"ALL"}, []*stats.Scope{r.All})
	writeModelTable(w, "Per model", r.All)
	if r.AgentUse != nil && *r.AgentUse > 0 {
		fmt.Fprintf(w, "\nAgentUse  %s below it (their usage is not counted)\n", human.Plural(*r.AgentUse, "session", "sessions"))
	}
	return ew.err
}

// writeScopeTable prints the counts of one or more scopes side by side.
func writeScopeTable(w io.Writer, heads []string, scopes []*stats.Scope) {
	row := func(label string, val func(*stats.Scope) string) {
		line := fmt.Sprintf("%-24s", label)
		for _, s := range scopes {
			line += fmt.Sprintf("  %12s", val(s))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	row("", func(s *stats.Scope) string {
		for i, x := range scopes {
			if x == s {
				return heads[i]
			}
		}
		return ""
	})
	num := func(f func(*stats.Scope) int64) func(*stats.Scope) string {
		return func(s *stats.Scope) string { return strconv.FormatInt(f(s), 10) }
	}
	row("entries", num(func(s *stats.Scope) int64 { return int64(s.Entries) }))
	for _, t := range unionKeys(scopes, func(s *stats.Scope) map[string]int { return s.Types }) {
		row("  "+t, num(func(s *stats.Scope) int64 { return int64(s.Types[t]) }))
	}
	row("messages", num(func(s *stats.Scope) int64 { return int64(s.Messages) }))
	for _, r := range unionKeys(scopes, func(s *stats.Scope) map[string]int { return s.Roles }) {
		row("  "+r, num(func(s *stats.Scope) int64 { return int64(s.Roles[r]) }))
	}
	row("tokens", func(*stats.Scope) string { return "" })
	row("  input", num(func(s *stats.Scope) int64 { return s.Usage.Input }))
	row("  output", num(func(s *stats.Scope) int64 { return s.Usage.Output }))
	row("  cache read", num(func(s *stats.Scope) int64 { return s.Usage.CacheRead }))
	row("  cache write", num(func(s *stats.Scope) int64 { return s.Usage.CacheWrite }))
	row("  total", num(func(s *stats.Scope) int64 { return s.Usage.TotalTokens }))
	row("cost", func(s *stats.Scope) string { return human.Cost(s.Usage.Cost.Total) })
}

// unionKeys returns the sorted keys of a map over every scope.
func unionKeys(scopes []*stats.Scope, m func(*stats.Scope) map[string]int) []string {
	seen := map[string]bool{}
	var keys []string
	for _, s := range scopes {
		for k := range m(s) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// writeModelTable prints the usage per model of a scope.
func writeModelTable(w io.Writer, title string, s *stats.Scope) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(s.Models) == 0 {
		fmt.Fprintln(w, "  no assistant messages")
		return
	}
	fmt.Fprintf(w, "  %-36s %5s %10s %9s %10s %10s %10s %12s\n", "MODEL", "MSGS", "INPUT", "OUTPUT", "CACHE R", "CACHE W", "TOTAL", "COST")
	for _, m := range s.Models {
		fmt.Fprintf(w, "  %-36s %5d %10d %9d %10d %10d %10d %12s\n", human.CutRunes(m.Model, 36), m.Messages,
			m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheWrite, m.Usage.TotalTokens, human.Cost(m.Usage.Cost.Total))
	}
}
