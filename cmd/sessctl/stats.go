package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

var statsCommand = &command{
	name:    "stats",
	summary: "count messages, tokens and cost of a session, per model",
	usage: `
Usage: sessctl stats [--json] SESSION
       sessctl stats --all [--store STORE] [--json]

Counts a session's entries by type, its messages by role, and the tokens
and cost the assistant messages report in their "usage" (input, output,
cache read, cache write, total; cost in dollars as the provider priced
it), in total and per model ("provider/model"). Every number is given
twice: over every entry in the file (all branches, including abandoned
ones), and over the active branch (root to leaf). A usage without
totalTokens counts input + output + cacheRead + cacheWrite; a cost without
a total counts the sum of its parts.

--all adds up every session file under the store (--store pi, indusagi
or a directory; every *.jsonl file, recursively, but not the deleted
sessions in its .trash directory), over all entries.

--json prints one object:

  {"path": FILE, "id": ID, "name": NAME, "leaf": ID,
   "all": SCOPE, "branch": SCOPE}

and with --all: {"store": DIR, "sessions": N, "skipped": N, "all": SCOPE}.
A SCOPE is

  {"entries": N, "types": {TYPE: N}, "messages": N, "roles": {ROLE: N},
   "usage": USAGE, "models": [{"model": "provider/model", "provider": P,
   "modelId": M, "messages": N, "usage": USAGE}]}

and a USAGE is {"input", "output", "cacheRead", "cacheWrite",
"totalTokens", "cost": {"input", "output", "cacheRead", "cacheWrite",
"total"}}. "name" and "leaf" are null when the session has none; models
are sorted by total tokens, then by name.

SESSION is a file path, a session id or a unique id prefix (see --store).
Files are read without a lock and never written.

Examples:
  sessctl stats 390d8e15
  sessctl stats --json session.jsonl | jq .branch.usage.cost.total
  sessctl stats --all
`,
}

func init() { register(statsCommand).run = runStats }

func runStats(e *env, args []string) int {
	fs := e.flags(statsCommand)
	store := storeFlag(fs)
	all := fs.Bool("all", false, "add up every session in the store")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(statsCommand, fs, args); code >= 0 {
		return code
	}
	if *all {
		if fs.NArg() != 0 {
			return e.usageError("--all takes no SESSION")
		}
		return statsAll(e, *store, *asJSON)
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	sv, err := openView(e, *store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	var branch []*jsonl.Entry
	if sv.leaf != "" {
		branch = sv.s.BranchPath("")
	}
	rep := statsReport{
		Path:   sv.path,
		ID:     sv.id,
		All:    countScope(sv.entries),
		Branch: countScope(branch),
	}
	if sv.hasName {
		rep.Name = &sv.name
	}
	if sv.leaf != "" {
		rep.Leaf = &sv.leaf
	}
	w := bufio.NewWriter(e.stdout)
	if *asJSON {
		emitJSON(w, rep)
	} else {
		writeStatsText(w, &rep)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// statsAll adds up every session file of a store.
func statsAll(e *env, store string, asJSON bool) int {
	root, err := storeRoot(store)
	if err != nil {
		return e.fail(err)
	}
	total := newScope()
	var sessions, skipped int
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if err := e.ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".trash" && p != root {
			return filepath.SkipDir // sessions moved aside by 'sessctl delete'
		}
		if d.IsDir() || !layout.IsSessionFileName(d.Name()) {
			return nil
		}
		data, err := vfs.ReadRegular(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: %v\n", p, err)
			skipped++
			return nil
		}
		parsed := jsonl.ParseFile(data)
		if len(parsed.Entries) == 0 || !parsed.Entries[0].IsHeader() || parsed.Entries[0].IDKind != jsonl.KindString {
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: no session header\n", p)
			skipped++
			return nil
		}
		e.warnVersion(p, parsed.Entries[0])
		entries, _, merr := migrate.Entries(parsed.Entries)
		if merr != nil {
			fmt.Fprintf(e.stderr, "sessctl: stats: skipping %s: %v\n", p, merr)
			skipped++
			return nil
		}
		for i := 1; i < len(entries); i++ {
			if !entries[i].IsHeader() {
				total.add(&entries[i])
			}
		}
		sessions++
		return nil
	})
	if err != nil {
		return e.fail(fmt.Errorf("stats of %s: %w", root, err))
	}
	total.finish()
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		emitJSON(w, struct {
			Store    string     `json:"store"`
			Sessions int        `json:"sessions"`
			Skipped  int        `json:"skipped"`
			All      *scopeStat `json:"all"`
		}{root, sessions, skipped, total})
	} else {
		fmt.Fprintf(w, "Store     %s\n", quotePath(root))
		fmt.Fprintf(w, "Sessions  %d", sessions)
		if skipped > 0 {
			fmt.Fprintf(w, " (%d files skipped)", skipped)
		}
		fmt.Fprintf(w, "\n\n")
		writeScopeTable(w, []string{"ALL"}, []*scopeStat{total})
		writeModelTable(w, "Per model", total)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// writeJSON writes v as indented JSON without HTML escaping.
func emitJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

type statsReport struct {
	Path   string     `json:"path"`
	ID     string     `json:"id"`
	Name   *string    `json:"name"`
	Leaf   *string    `json:"leaf"`
	All    *scopeStat `json:"all"`
	Branch *scopeStat `json:"branch"`
}

// tokenUsage is an assistant message's usage, or a sum of them.
type tokenUsage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        struct {
		Input      float64 `json:"input"`
		Output     float64 `json:"output"`
		CacheRead  float64 `json:"cacheRead"`
		CacheWrite float64 `json:"cacheWrite"`
		Total      float64 `json:"total"`
	} `json:"cost"`
}

// readUsage decodes a usage object leniently.
func readUsage(u rview) tokenUsage {
	var out tokenUsage
	n := func(v rview) float64 { f, _ := v.num(); return f }
	i := func(v rview) int64 { return int64(math.Round(n(v))) }
	out.Input = i(u.get("input"))
	out.Output = i(u.get("output"))
	out.CacheRead = i(u.get("cacheRead"))
	out.CacheWrite = i(u.get("cacheWrite"))
	if t := u.get("totalTokens"); t.kind() == jsonl.KindNumber {
		out.TotalTokens = i(t)
	} else {
		out.TotalTokens = out.Input + out.Output + out.CacheRead + out.CacheWrite
	}
	c := u.get("cost")
	out.Cost.Input = n(c.get("input"))
	out.Cost.Output = n(c.get("output"))
	out.Cost.CacheRead = n(c.get("cacheRead"))
	out.Cost.CacheWrite = n(c.get("cacheWrite"))
	if t := c.get("total"); t.kind() == jsonl.KindNumber {
		out.Cost.Total = n(t)
	} else {
		out.Cost.Total = out.Cost.Input + out.Cost.Output + out.Cost.CacheRead + out.Cost.CacheWrite
	}
	return out
}

func (u *tokenUsage) add(o tokenUsage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
	u.Cost.Input += o.Cost.Input
	u.Cost.Output += o.Cost.Output
	u.Cost.CacheRead += o.Cost.CacheRead
	u.Cost.CacheWrite += o.Cost.CacheWrite
	u.Cost.Total += o.Cost.Total
}

// round drops the float noise of long sums (1e-10 dollars).
func (u *tokenUsage) round() {
	r := func(f *float64) { *f = math.Round(*f*1e10) / 1e10 }
	r(&u.Cost.Input)
	r(&u.Cost.Output)
	r(&u.Cost.CacheRead)
	r(&u.Cost.CacheWrite)
	r(&u.Cost.Total)
}

type modelStat struct {
	Model    string     `json:"model"`
	Provider string     `json:"provider"`
	ModelID  string     `json:"modelId"`
	Messages int        `json:"messages"`
	Usage    tokenUsage `json:"usage"`
}

type scopeStat struct {
	Entries  int            `json:"entries"`
	Types    map[string]int `json:"types"`
	Messages int            `json:"messages"`
	Roles    map[string]int `json:"roles"`
	Usage    tokenUsage     `json:"usage"`
	Models   []*modelStat   `json:"models"`

	byModel map[string]*modelStat
}

func newScope() *scopeStat {
	return &scopeStat{Types: map[string]int{}, Roles: map[string]int{}, Models: []*modelStat{}, byModel: map[string]*modelStat{}}
}

func countScope(entries []*jsonl.Entry) *scopeStat {
	s := newScope()
	for _, en := range entries {
		s.add(en)
	}
	s.finish()
	return s
}

func (s *scopeStat) add(en *jsonl.Entry) {
	s.Entries++
	s.Types[firstNonEmpty(en.Type, "(none)")]++
	if en.Type != jsonl.TypeMessage {
		return
	}
	m := msgOf(en)
	role := firstNonEmpty(m.s("role"), "(none)")
	s.Messages++
	s.Roles[role]++
	if role != "assistant" {
		return
	}
	provider, model := m.s("provider"), m.s("model")
	name := modelLabel(provider, model)
	ms := s.byModel[name]
	if ms == nil {
		ms = &modelStat{Model: name, Provider: provider, ModelID: model}
		s.byModel[name] = ms
		s.Models = append(s.Models, ms)
	}
	ms.Messages++
	if u := m.get("usage"); u.kind() == jsonl.KindObject {
		us := readUsage(u)
		ms.Usage.add(us)
		s.Usage.add(us)
	}
}

func (s *scopeStat) finish() {
	s.Usage.round()
	for _, m := range s.Models {
		m.Usage.round()
	}
	sort.SliceStable(s.Models, func(i, j int) bool {
		a, b := s.Models[i], s.Models[j]
		if a.Usage.TotalTokens != b.Usage.TotalTokens {
			return a.Usage.TotalTokens > b.Usage.TotalTokens
		}
		return a.Model < b.Model
	})
}

func writeStatsText(w io.Writer, r *statsReport) {
	fmt.Fprintf(w, "Session  %s\n", quotePath(r.ID))
	if r.Name != nil {
		fmt.Fprintf(w, "Name     %s\n", oneLine(*r.Name, 100))
	}
	fmt.Fprintf(w, "File     %s\n", quotePath(r.Path))
	if r.Leaf != nil {
		fmt.Fprintf(w, "Leaf     %s\n", *r.Leaf)
	} else {
		fmt.Fprintf(w, "Leaf     none\n")
	}
	fmt.Fprintln(w)
	writeScopeTable(w, []string{"FILE", "BRANCH"}, []*scopeStat{r.All, r.Branch})
	writeModelTable(w, "Per model, whole file", r.All)
	writeModelTable(w, "Per model, active branch", r.Branch)
}

// writeScopeTable prints the counts of one or more scopes side by side.
func writeScopeTable(w io.Writer, heads []string, scopes []*scopeStat) {
	row := func(label string, val func(*scopeStat) string) {
		line := fmt.Sprintf("%-24s", label)
		for _, s := range scopes {
			line += fmt.Sprintf("  %12s", val(s))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	row("", func(s *scopeStat) string {
		for i, x := range scopes {
			if x == s {
				return heads[i]
			}
		}
		return ""
	})
	num := func(f func(*scopeStat) int64) func(*scopeStat) string {
		return func(s *scopeStat) string { return strconv.FormatInt(f(s), 10) }
	}
	row("entries", num(func(s *scopeStat) int64 { return int64(s.Entries) }))
	for _, t := range unionKeys(scopes, func(s *scopeStat) map[string]int { return s.Types }) {
		row("  "+t, num(func(s *scopeStat) int64 { return int64(s.Types[t]) }))
	}
	row("messages", num(func(s *scopeStat) int64 { return int64(s.Messages) }))
	for _, r := range unionKeys(scopes, func(s *scopeStat) map[string]int { return s.Roles }) {
		row("  "+r, num(func(s *scopeStat) int64 { return int64(s.Roles[r]) }))
	}
	row("tokens", func(*scopeStat) string { return "" })
	row("  input", num(func(s *scopeStat) int64 { return s.Usage.Input }))
	row("  output", num(func(s *scopeStat) int64 { return s.Usage.Output }))
	row("  cache read", num(func(s *scopeStat) int64 { return s.Usage.CacheRead }))
	row("  cache write", num(func(s *scopeStat) int64 { return s.Usage.CacheWrite }))
	row("  total", num(func(s *scopeStat) int64 { return s.Usage.TotalTokens }))
	row("cost", func(s *scopeStat) string { return fmtCost(s.Usage.Cost.Total) })
}

// unionKeys returns the sorted keys of a map over every scope.
func unionKeys(scopes []*scopeStat, m func(*scopeStat) map[string]int) []string {
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

func writeModelTable(w io.Writer, title string, s *scopeStat) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(s.Models) == 0 {
		fmt.Fprintln(w, "  no assistant messages")
		return
	}
	fmt.Fprintf(w, "  %-36s %5s %10s %9s %10s %10s %10s %12s\n", "MODEL", "MSGS", "INPUT", "OUTPUT", "CACHE R", "CACHE W", "TOTAL", "COST")
	for _, m := range s.Models {
		fmt.Fprintf(w, "  %-36s %5d %10d %9d %10d %10d %10d %12s\n", cutRunes(m.Model, 36), m.Messages,
			m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheWrite, m.Usage.TotalTokens, fmtCost(m.Usage.Cost.Total))
	}
}
