package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/search"
)

var searchCommand = &command{
	name:    "search",
	summary: "find text in every session: prompts, replies, tool calls and results",
	usage: `
Usage: sessctl search [--store pi|indusagi|agentuse|DIR]... [--all] [--cwd DIR]
                      [--since DATE] [--until DATE] [--role ROLE] [--tool NAME]
                      [--limit N] [--json] [--no-index] [--reindex] QUERY

Finds QUERY in user prompts, assistant text and thinking, tool calls (the
tool's name and arguments) and tool results, custom messages, compaction
and branch summaries, labels and session names, newest first. Each hit
shows the session (id, name, working directory), the entry, its role and
time, the text around the first match (matches highlighted on a
terminal), and the command that shows the hit in its session:
'sessctl show --leaf ENTRY SESSION' (the branch that ends at the entry),
or 'sessctl show DIR' for an AgentUse session.

QUERY is SQLite FTS5 syntax. Words must all occur (in any order, case
and accents ignored); "a phrase" in double quotes; migr* for a prefix;
AND, OR, NOT and parentheses; NEAR(word other, 10). Quote the whole
query for the shell: sessctl search '"flaky migration" OR flake*'.
Punctuation separates words: search for 'bytes.Split' as "bytes Split".

--store says where to search (repeat it for several): pi (the default:
PI_CODING_AGENT_DIR, default ~/.pi/agent), indusagi, agentuse (every
AgentUse project under $XDG_DATA_HOME/agentuse/project), or a directory,
searched recursively for session files and AgentUse sessions. --all
searches pi, indusagi and AgentUse (those that exist).

Filters: --cwd DIR keeps sessions whose working directory is DIR or
below it; --since and --until keep texts from DATE on and before DATE
(2026-03-01, 2026-03-01T09:30, RFC 3339 times, or an age such as 7d,
12h; dates are UTC; a bare --until date counts its whole day); --role
keeps user, assistant (text and thinking), tool (tool calls and
results) or other (custom messages, summaries, labels, names); --tool
NAME keeps calls and results of one tool. --limit N shows the N newest
hits (default 20; 0: all).

--json prints one JSON object per line and hit: session {path, id, name,
cwd, format}, entry, file, offset (of the line in the file), role, kind
(user, text, thinking, toolCall, toolResult, bash, custom, compaction,
branchSummary, label, name, task, error, tool), tool, timestamp,
snippet, matches (the [start, end) byte offsets of the matches in the
snippet) and show (the command line that shows the hit).

The search index lives in $XDG_CACHE_HOME/sessctl/search (default
~/.cache/sessctl/search; --index-dir DIR elsewhere). It is a cache:
every search first brings it up to date with the session files (new
lines of grown files are added, changed files indexed again, deleted
ones removed), and deleting it is always safe. The first search of a
large store builds it, with progress on a terminal. --reindex builds it
again from scratch; --no-index reads every file instead and writes
nothing.

Exit status: 0 when something was found, 1 when nothing was (as grep),
or when a file could not be read (reported on stderr), 2 for a bad
query or usage, 5 when a store named with --store does not exist.

Examples:
  sessctl search 'flaky migration'
  sessctl search --all --since 7d '"connection refused"'
  sessctl search --role tool --tool bash 'make test'
  sessctl search --store ~/backup/sessions --json 'deploy*' | jq -r .show[]
`,
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
	fs := e.flags(searchCommand)
	var stores storesValue
	fs.Var(&stores, "store", "search `STORE`: pi, indusagi, agentuse or a directory (repeatable; default pi)")
	all := fs.Bool("all", false, "search pi, indusagi and AgentUse")
	cwd := fs.String("cwd", "", "keep sessions whose working directory is `DIR` or below it")
	since := fs.String("since", "", "keep texts from `DATE` on")
	until := fs.String("until", "", "keep texts before `DATE` (a bare date: up to its end)")
	role := fs.String("role", "", "keep one `ROLE`: user, assistant, tool or other")
	tool := fs.String("tool", "", "keep calls and results of the tool `NAME`")
	limit := fs.Int("limit", 20, "show the `N` newest hits (0: all)")
	asJSON := fs.Bool("json", false, "print one JSON object per hit")
	noIndex := fs.Bool("no-index", false, "read every file instead of using the search index")
	reindex := fs.Bool("reindex", false, "build the search index again from scratch")
	indexDir := fs.String("index-dir", "", "keep the search index in `DIR` (default: the user cache directory)")
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
	case "", search.RoleUser, search.RoleAssistant, search.RoleTool, search.RoleOther:
	default:
		return e.usageError("--role must be user, assistant, tool or other, not %q", *role)
	}
	if *noIndex && *reindex {
		return e.usageError("--no-index and --reindex cannot be combined")
	}
	now := time.Now().UTC()
	var err error
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
		if q.Cwd, err = filepath.Abs(*cwd); err != nil {
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
	o := search.Options{Dir: *indexDir, NoIndex: *noIndex, Rebuild: *reindex,
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
	x, err := search.Open(e.ctx, o)
	if err != nil {
		return e.fail(err)
	}
	defer x.Close()

	out, color := searchOutput(e.stdout)
	w := bufio.NewWriterSize(out, 1<<16)
	hits := 0
	for h, err := range x.Search(e.ctx, q) {
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
			return e.fail(err)
		}
		hits++
		if *asJSON {
			writeHitJSON(w, &h)
		} else {
			writeHit(w, &h, color)
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

// searchStores turns --store values (or --all) into stores to search.
func searchStores(names []string, all bool) ([]search.Store, error) {
	if all {
		return search.AllStores()
	}
	if len(names) == 0 {
		names = []string{"pi"}
	}
	var out []search.Store
	for _, n := range names {
		switch n {
		case "pi", "indusagi", "agentuse":
			st, err := search.NamedStore(n)
			if err != nil {
				return nil, err
			}
			if err := mustBeDir(n+" store", st.Root); err != nil {
				return nil, err
			}
			out = append(out, st)
		default:
			if err := mustBeDir("session store", n); err != nil {
				return nil, err
			}
			out = append(out, search.DirStores(n)...)
		}
	}
	return out, nil
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

// rawStdout writes to the terminal without escaping.
type rawStdout struct{ s *stdoutWriter }

func (r rawStdout) Write(p []byte) (int, error) {
	n, err := r.s.f.Write(p)
	return n, r.s.check(err)
}

const (
	hlOn  = "\033[1;31m"
	hlOff = "\033[0m"
)

func writeHit(w *bufio.Writer, h *search.Hit, color bool) {
	when := "-"
	if !h.Time.IsZero() {
		when = h.Time.Format("2006-01-02 15:04:05")
	}
	entry := ""
	if h.Entry != "" {
		entry = " [" + h.Entry + "]"
	}
	safe := func(s string) string {
		if color && !human.PlainText(s) {
			return strings.Trim(strconv.Quote(s), `"`)
		}
		return s
	}
	name := ""
	if h.Session.Name != "" {
		name = " " + strconv.Quote(h.Session.Name)
	}
	fmt.Fprintf(w, "%s  %s%s  %s%s  %s\n", when, safe(h.Label()), safe(entry), safe(render.ShortID(h.Session.ID)), safe(name), human.QuotePath(h.Session.Cwd))
	w.WriteString("    ")
	last := 0
	for _, m := range h.Matches {
		w.WriteString(safe(h.Snippet[last:m[0]]))
		if color {
			w.WriteString(hlOn)
		}
		w.WriteString(safe(h.Snippet[m[0]:m[1]]))
		if color {
			w.WriteString(hlOff)
		}
		last = m[1]
	}
	w.WriteString(safe(h.Snippet[last:]))
	w.WriteString("\n    ")
	for i, a := range h.ShowArgs() {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(showWord(a))
	}
	w.WriteString("\n\n")
}

// showWord quotes a word of the show command for a POSIX shell, or as
// Go does when it holds control characters (which no shell quoting makes
// safe to print).
func showWord(s string) string {
	if !human.PlainText(s) {
		return human.QuotePath(s)
	}
	return human.ShellQuote(s)
}

func writeHitJSON(w *bufio.Writer, h *search.Hit) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(h.JSON())
}
