package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
)

var searchCommand = &command{
	name:    "search",
	summary: "find text in every session: prompts, replies, tool calls and results",
	usage:   helpText("search"),
}

func init() { register(searchCommand).run = runSearch }

// storesValue collects repeated --store flags.
type storesValue []string

func (s *storesValue) String() string { return strings.Join(*s, ",") }

func (s *storesValue) Set(v string) error {
	if v == "" {
		return errors.New("empty store")
	}
	*s = append(*s, v)
	return nil
}

func runSearch(e *env, args []string) int {
	boundHeap()
	fs := e.flags(searchCommand)
	var stores storesValue
	fs.Var(&stores, "store", "search `STORE`: pi, indusagi, agentuse or a directory (repeatable; default pi)")
	all := fs.Bool("all", false, "search pi, indusagi and AgentUse")
	cwd := fs.String("cwd", "", "keep sessions whose working directory is `DIR` or below it")
	since := fs.String("since", "", "keep texts from `DATE` on")
	until := fs.String("until", "", "keep texts before `DATE` (a bare date: up to its end)")
	role := fs.String("role", "", "keep one `ROLE`: user, assistant, tool, system or other")
	tool := fs.String("tool", "", "keep calls and results of the tool `NAME`")
	limit := fs.Int("limit", 20, "show the `N` newest hits (0: all)")
	asJSON := fs.Bool("json", false, "print one JSON object per hit")
	noIndex := fs.Bool("no-index", false, "read every file instead of using the search index")
	reindex := fs.Bool("reindex", false, "build the search index again from scratch")
	indexDir := fs.String("index-dir", "", "keep the search index in `DIR` (default: the user cache directory)")
	engineName := fs.String("engine", "", "the search index `ENGINE`: own (sessctl's own index, the default) or fts5 (SQLite FTS5)")
	if code := e.parse(searchCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		if fs.NArg() == 0 {
			return e.usageError("expected a QUERY")
		}
		return e.usageError("expected one QUERY, got %d arguments (quote the query: sessctl search 'a b')", fs.NArg())
	}
	q := search.Query{Text: fs.Arg(0), Role: *role, Tool: *tool, Limit: *limit}
	if *limit < 0 {
		return e.usageError("--limit must be 0 or more")
	}
	switch *role {
	case "", search.RoleUser, search.RoleAssistant, search.RoleTool, search.RoleSystem, search.RoleOther:
	default:
		return e.usageError("--role must be user, assistant, tool, system or other, not %s", human.Quote(*role))
	}
	engine, err := search.ParseEngine(*engineName)
	if err != nil {
		return e.usageError("--engine: %v", err)
	}
	if *noIndex && *reindex {
		return e.usageError("--no-index and --reindex cannot be combined")
	}
	now := time.Now().UTC()
	if *since != "" {
		if q.Since, err = search.ParseTime(*since, now, false); err != nil {
			return e.usageError("--since: %v", err)
		}
	}
	if *until != "" {
		if q.Until, err = search.ParseTime(*until, now, true); err != nil {
			return e.usageError("--until: %v", err)
		}
	}
	if *cwd != "" {
		if q.Cwd, err = cwdArg(*cwd); err != nil {
			return e.fail(err)
		}
	}
	if *all && len(stores) > 0 {
		return e.usageError("--all and --store cannot be combined")
	}
	q.Stores, err = searchStores(stores, *all)
	if err != nil {
		return e.fail(err)
	}

	skipped := 0
	var prog *progress
	o := search.Options{Dir: *indexDir, NoIndex: *noIndex, Rebuild: *reindex, Engine: engine,
		Warn: func(err error) {
			skipped++
			fmt.Fprintf(e.stderr, "sessctl: search: skipped %v\n", err)
		},
		Progress: func(done, total int64) {
			if prog == nil {
				if total < 8<<20 {
					return // small updates draw nothing
				}
				prog = newProgress(e.stderr, "sessctl: search: indexing (MB)", int(total>>20))
			}
			prog.update(int(done >> 20))
		},
	}
	// A running 'sessctl serve' of these stores and this index answers
	// from its watched index; without one, the search is this process's.
	hitSeq, asked := search.Ask(e.ctx, o, q)
	if !asked {
		x, err := search.Open(e.ctx, o)
		if err != nil {
			return searchFail(e, err)
		}
		defer x.Close()
		hitSeq = x.Search(e.ctx, q)
	}

	out, color := searchOutput(e.stdout)
	w := bufio.NewWriterSize(out, 1<<16)
	hits := 0
	var ids *shortid.Set // read at the first hit
	for h, err := range hitSeq {
		if prog != nil {
			prog.done()
			prog = nil
		}
		if err != nil {
			w.Flush()
			if errors.Is(err, search.ErrQuery) {
				fmt.Fprintf(e.stderr, "sessctl: search: %v\n", err)
				fmt.Fprintf(e.stderr, "hint: words, \"a phrase\", prefix*, AND, OR, NOT, NEAR(a b); quote punctuation: '\"bytes.Split\"'\n")
				return exitUsage
			}
			return searchFail(e, err)
		}
		hits++
		if *asJSON {
			writeHitJSON(w, &h)
		} else {
			if ids == nil && h.Session.Short == "" {
				ids = searchShortIDs(e.ctx, q.Stores)
			}
			writeHit(w, &h, ids, color)
		}
	}
	if prog != nil {
		prog.done()
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if hits == 0 {
		if !*asJSON {
			fmt.Fprintln(e.stderr, "no hits")
		}
		return exitFailure
	}
	if skipped > 0 {
		return exitFailure
	}
	return exitOK
}

// searchFail reports a search's error: an index directory inside a store
// is a usage mistake (exit 2), an index that could not be used has its
// own exit code (6), not grep's "nothing found" (1).
func searchFail(e *env, err error) int {
	switch {
	case errors.Is(err, fs.ErrInvalid):
		fmt.Fprintf(e.stderr, "sessctl: search: %v\n", err)
		fmt.Fprintf(e.stderr, "hint: give --index-dir a directory outside every session store, or leave it out (the user cache directory)\n")
		return exitUsage
	case errors.Is(err, search.ErrIndex):
		fmt.Fprintf(e.stderr, "sessctl: search: %v\n", err)
		fmt.Fprintf(e.stderr, "hint: the search index failed, so nothing is known about hits; retry, rebuild it with --reindex, or search without it with --no-index\n")
		return exitIndex
	}
	return e.fail(err)
}

// searchStores turns --store values (or --all, which is --store all)
// into places to search. A named place must exist, but "all" keeps those
// of this machine that exist, and none is not found.
func searchStores(names []string, all bool) ([]layout.Place, error) {
	if all {
		names = []string{layout.PlaceAll}
	}
	if len(names) == 0 {
		names = []string{layout.PlacePi}
	}
	var out []layout.Place
	for _, n := range names {
		ps, err := storePlaces(n)
		if err != nil {
			return nil, err
		}
		if n == layout.PlaceAll {
			if ps = existingPlaces(ps); len(ps) == 0 {
				return nil, fmt.Errorf("no pi, indusagi or AgentUse store found: %w", fs.ErrNotExist)
			}
		} else if layout.IsPlaceName(n) {
			if err := mustBeDir(n+" store", ps[0].Root); err != nil {
				return nil, err
			}
		}
		out = append(out, ps...)
	}
	return out, nil
}

// existingPlaces returns the places of ps whose root exists.
func existingPlaces(ps []layout.Place) []layout.Place {
	var out []layout.Place
	for _, p := range ps {
		if _, err := os.Stat(p.Root); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// searchOutput returns where hits go and whether to colour matches: on a
// terminal (and without NO_COLOR), the highlighting bypasses the control
// character escaping of standard output, and the text is escaped here.
func searchOutput(w io.Writer) (io.Writer, bool) {
	s, ok := w.(*stdoutWriter)
	if !ok || s.esc == nil || os.Getenv("NO_COLOR") != "" {
		return w, false
	}
	return rawStdout{s}, true
}

const (
	hlOn  = "\033[1;31m"
	hlOff = "\033[0m"
)

// writeHit prints a hit for people (search.Hit.WriteText) with its
// short id and the command that shows it.
func writeHit(w *bufio.Writer, h *search.Hit, ids *shortid.Set, color bool) {
	id := h.Session.Short
	if id == "" {
		id = ids.Short(h.Session.ID)
	}
	_ = h.WriteText(w, search.TextOptions{ID: id, Highlight: color, MatchStart: hlOn, MatchEnd: hlOff, Escape: termEscape, Command: showArgs(h)})
}

// writeHitJSON prints a hit as JSON (search.Hit.WriteJSON) with the
// command that shows it.
func writeHitJSON(w *bufio.Writer, h *search.Hit) { _ = h.WriteJSON(w, showArgs(h)) }

// showArgs returns the sessctl command line that shows the hit in its
// session: the branch that ends at the entry for a JSONL session, the
// session for an AgentUse one.
func showArgs(h *search.Hit) []string {
	if h.Session.Format == layout.FormatAgentUse || h.Entry == "" {
		return []string{"sessctl", "show", h.Session.Path}
	}
	return []string{"sessctl", "show", "--leaf", h.Entry, h.Session.Path}
}
