package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
)

// Query is what to search for and where.
type Query struct {
	// Text is an FTS5 query: words (all must occur: "flaky migration"),
	// "phrases in quotes", prefixes (migr*), AND, OR, NOT and parentheses,
	// NEAR(a b, 5). Matching ignores case and diacritics.
	Text string
	// Stores are the places to search (layout.ResolvePlaces names them).
	// A FormatJSONL place's session files (*.jsonl) are searched
	// recursively (symbolic links to directories are not followed,
	// .trash directories are left out); a FormatAgentUse place is
	// searched as AgentUse discovers sessions, at any depth. A place's
	// Name is not used.
	Stores []layout.Place
	// Cwd keeps sessions whose working directory is Cwd or below it.
	Cwd string
	// Since and Until keep texts written at or after Since and before
	// Until (zero: no bound). Texts without a time are left out when a
	// bound is set.
	Since, Until time.Time
	// Role keeps one role: RoleUser, RoleAssistant, RoleTool, RoleSystem
	// or RoleOther ("" keeps all).
	Role string
	// Tool keeps tool calls and results of the tool with this name.
	Tool string
	// Limit is the most hits returned; 0 means all.
	Limit int
}

// Session is the session a hit is in.
type Session struct {
	// Path is the session file, or the AgentUse session directory.
	Path   string
	ID     string
	Name   string // the session's name ("" when unnamed); AgentUse: the agent's name
	Cwd    string
	Format layout.Format
	// Short is ID shortened as sessctl shows ids: the shortest prefix,
	// of eight characters or more, that no other JSONL session of the
	// stores searched shares. It is set by EngineOwn, whose index knows
	// those sessions; "" from the other engines and Options.NoIndex.
	Short string
}

// Hit is one matching text.
type Hit struct {
	Session Session
	// Entry is the id of the entry the text is in (an AgentUse part,
	// message or session id); "" for entries without an id (version 1
	// files).
	Entry string
	// File is the file the text is in and Offset the byte offset of its
	// line (0 for AgentUse files, which are whole JSON objects).
	File   string
	Offset int64
	Kind   Kind
	Role   string
	Tool   string    // the tool of a tool call or result
	Time   time.Time // zero when the entry has no time
	// Snippet is the text around the first match, whitespace folded, and
	// Matches the byte ranges [start, end) of the matches in it.
	Snippet string
	Matches [][2]int
}

// candidate is a matching text found by a query, before its snippet.
type candidate struct {
	sess   *Session
	file   string
	fkind  fileKind
	off, n int64
	part   int
	kind   Kind
	tool   string
	ts     int64
	entry  string
	// entryFromFile: entry is read from the file with the text (the own
	// engine does not keep it).
	entryFromFile bool
}

func compareCandidates(a, b *candidate) int {
	if c := cmp.Compare(b.ts, a.ts); c != 0 {
		return c
	}
	if c := strings.Compare(a.file, b.file); c != 0 {
		return c
	}
	if c := cmp.Compare(a.off, b.off); c != 0 {
		return c
	}
	return cmp.Compare(a.part, b.part)
}

// Search returns the texts that match q, newest first (then by file and
// position), each once. The index is first brought up to date with the
// stores, so the hits are those of the files as they are now; the index
// only makes that fast. A query FTS5 does not accept is an error
// matching ErrQuery; a store whose root is missing one matching
// fs.ErrNotExist.
func (x *Index) Search(ctx context.Context, q Query) iter.Seq2[Hit, error] {
	return func(yield func(Hit, error) bool) {
		// The own engine and the search without an index check, match
		// and mark in Go (sn); only the FTS5 engine opens an FTS5 table
		// for it.
		var hm hitMaker
		var sn *snipper
		var err error
		if x.o.NoIndex || x.o.Engine == EngineOwn {
			sn, err = newSnipper(ctx, x.fsys())
			hm = sn
		} else {
			hm, err = newFTSSnipper(ctx, x.fsys())
		}
		if err != nil {
			yield(Hit{}, err)
			return
		}
		defer hm.close()
		if err := hm.check(ctx, q.Text); err != nil {
			yield(Hit{}, err)
			return
		}
		if len(q.Stores) == 0 {
			yield(Hit{}, errors.New("search: no store to search"))
			return
		}
		x.warnMu.Lock()
		x.warned = nil
		x.warnMu.Unlock()
		warn := x.warn
		var cands []candidate
		var ids *shortid.Set // the ids to shorten hits' ids among (EngineOwn)
		if x.o.NoIndex {
			var files []found
			if files, err = walkFS(ctx, x.fsys(), q.Stores, warn, nil); err != nil {
				yield(Hit{}, err)
				return
			}
			cands, err = scan(ctx, x.fsys(), sn, files, q, warn)
		} else if x.o.Engine == EngineOwn {
			x.hitIDs = nil
			cands, err = x.ownSearch(ctx, sn, q, warn)
			ids = x.hitIDs
		} else {
			cands, err = x.search(ctx, q, warn)
		}
		if err != nil {
			yield(Hit{}, err)
			return
		}
		emitted := 0
		const chunk = 64
		for len(cands) > 0 {
			n := min(chunk, len(cands))
			if q.Limit > 0 {
				n = min(n, q.Limit-emitted+8)
			}
			hits, err := hm.hits(ctx, q.Text, cands[:n])
			if err != nil {
				yield(Hit{}, err)
				return
			}
			cands = cands[n:]
			for _, h := range hits {
				if ids != nil {
					h.Session.Short = ids.Short(h.Session.ID)
				}
				if !yield(h, nil) {
					return
				}
				if emitted++; q.Limit > 0 && emitted >= q.Limit {
					return
				}
			}
		}
	}
}

// roots returns the stores' roots, absolute.
func roots(stores []layout.Place) []string {
	var out []string
	for _, s := range stores {
		if r, err := filepath.Abs(s.Root); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// query updates the index and asks every shard, with the index's
// databases open. Shards found damaged by the update or the query are
// rebuilt (deleted, created empty, then indexed again), and the update
// and query run again: an answer comes from shards that were whole.
// search brings the index up to date with the stores and queries it; with
// a watch (Options.Watch), a search that finds nothing changed since the
// last one found the index current only queries.
func (x *Index) search(ctx context.Context, q Query, warn func(error)) ([]candidate, error) {
	key := storesKey(q.Stores)
	if x.w != nil && x.clean.ok && x.clean.key == key && x.clean.gen == x.w.generation() {
		cands, err := x.queryCurrent(ctx, q)
		if !errors.Is(err, errChanged) {
			return cands, err
		}
	}
	x.clean = cleanState{}
	var gen uint64
	watched := false
	if x.w != nil {
		// The count is taken before the walk: what changes from here on
		// makes the next search walk again.
		gen = x.w.generation()
		watched = watchAll(x.w, roots(q.Stores))
	}
	files, err := walkFS(ctx, x.fsys(), q.Stores, warn, nil)
	if err != nil {
		return nil, err
	}
	cands, tags, err := x.query(ctx, files, q)
	x.warnMu.Lock()
	warned := len(x.warned) > 0
	x.warnMu.Unlock()
	if err == nil && watched && tags != nil && !warned {
		x.clean = cleanState{ok: true, key: key, gen: gen, tags: tags}
	}
	return cands, err
}

// errChanged is why queryCurrent declines: the index is not as the last
// search left it.
var errChanged = errors.New("search index changed since the last search")

// queryCurrent queries the index without walking the stores, when the
// shards are as the last search left them; errChanged otherwise (also for
// a damaged shard, which the full path repairs).
func (x *Index) queryCurrent(ctx context.Context, q Query) ([]candidate, error) {
	var out []candidate
	err := x.use(ctx, q.Stores, func() error {
		tags, err := x.tags(ctx)
		if err != nil || !slices.Equal(tags, x.clean.tags) {
			return errChanged
		}
		out, err = x.queryShards(ctx, q, roots(q.Stores))
		var d *damage
		if errors.As(err, &d) {
			return errChanged
		}
		return err
	})
	return out, err
}

// tags returns every shard's identity and generation (shardTag).
func (x *Index) tags(ctx context.Context) ([]string, error) {
	out := make([]string, len(x.shards))
	for i, s := range x.shards {
		t, err := shardTag(ctx, s.db)
		if err != nil || t == "" {
			return nil, fmt.Errorf("read search index %s: no generation: %w", s.path, err)
		}
		out[i] = t
	}
	return out, nil
}

// query brings the index up to date with files and queries it; with a
// watch it also returns the shards' generations after the update.
func (x *Index) query(ctx context.Context, files []found, q Query) ([]candidate, []string, error) {
	var out []candidate
	var tags []string
	err := x.use(ctx, q.Stores, func() error {
		rs := roots(q.Stores)
		for attempt := 0; ; attempt++ {
			err := x.update(ctx, files, rs)
			if err == nil {
				out, err = x.queryShards(ctx, q, rs)
			}
			if err == nil && x.w != nil {
				tags, _ = x.tags(ctx) // none: the next search walks again
			}
			var d *damage
			if errors.As(err, &d) && attempt < 2 {
				if err := x.repairDamaged(ctx, d.shards); err != nil {
					return err
				}
				continue
			}
			return err
		}
	})
	return out, tags, err
}

// queryShards asks every shard and merges their candidates.
func (x *Index) queryShards(ctx context.Context, q Query, rs []string) ([]candidate, error) {
	sqlq, args := buildSQL(q, rs)
	results := make([][]candidate, len(x.shards))
	errs := make([]error, len(x.shards))
	var wg sync.WaitGroup
	for i, s := range x.shards {
		wg.Go(func() {
			results[i], errs[i] = queryShard(ctx, s, sqlq, args)
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
		case !isDamage(err) && (strings.Contains(err.Error(), "fts5: syntax") || strings.Contains(err.Error(), "no such column")):
			return nil, fmt.Errorf("%w: %v", ErrQuery, err)
		default:
			errs[i] = fmt.Errorf("search %s: %w", x.shards[i].path, err)
		}
	}
	if err := shardErrors(errs); err != nil {
		return nil, err
	}
	var all []candidate
	for _, r := range results {
		all = append(all, r...)
	}
	slices.SortFunc(all, func(a, b candidate) int { return compareCandidates(&a, &b) })
	if q.Limit > 0 && len(all) > q.Limit+16 {
		all = all[:q.Limit+16]
	}
	return all, nil
}

// kindsOf returns the kinds of a role.
func kindsOf(role string) []Kind {
	var out []Kind
	for k := KindUser; k <= kindLast; k++ {
		if k.Role() == role {
			out = append(out, k)
		}
	}
	return out
}

// prefixBounds returns the range of strings that start with dir and a
// separator: [lo, hi). The separator is '/' for a directory in the Unix
// form (see cleanCwd), else the system's.
func prefixBounds(dir string) (string, string) {
	sep := byte(filepath.Separator)
	if strings.HasPrefix(dir, "/") {
		sep = '/'
	}
	lo := strings.TrimSuffix(dir, string(sep)) + string(sep)
	return lo, lo[:len(lo)-1] + string(sep+1)
}

func buildSQL(q Query, roots []string) (string, []any) {
	var sb strings.Builder
	sb.WriteString(`SELECT f.path, f.kind, d.off, d.len, d.part, d.kind, d.tool, d.ts, d.entry, s.path, s.sid, s.name, s.cwd, s.format
FROM fts JOIN docs d ON d.id = fts.rowid JOIN files f ON f.id = d.file JOIN sessions s ON s.id = d.session
WHERE fts MATCH ?`)
	args := []any{q.Text}
	if len(roots) > 0 {
		sb.WriteString(` AND (`)
		for i, r := range roots {
			if i > 0 {
				sb.WriteString(` OR `)
			}
			lo, hi := prefixBounds(r)
			sb.WriteString(`(f.path >= ? AND f.path < ?)`)
			args = append(args, lo, hi)
		}
		sb.WriteString(`)`)
	}
	if q.Role != "" {
		sb.WriteString(` AND d.kind IN (`)
		for i, k := range kindsOf(q.Role) {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%d", k)
		}
		sb.WriteString(`)`)
	}
	if q.Tool != "" {
		sb.WriteString(` AND d.tool = ?`)
		args = append(args, q.Tool)
	}
	if !q.Since.IsZero() {
		sb.WriteString(` AND d.ts >= ?`)
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		sb.WriteString(` AND d.ts < ? AND d.ts != 0`)
		args = append(args, q.Until.UnixMilli())
	}
	if q.Cwd != "" {
		lo, hi := prefixBounds(q.Cwd)
		sb.WriteString(` AND (s.cwd = ? OR (s.cwd >= ? AND s.cwd < ?))`)
		args = append(args, cleanCwd(q.Cwd), lo, hi)
	}
	sb.WriteString(` ORDER BY d.ts DESC, f.path, d.off, d.part`)
	if q.Limit > 0 {
		fmt.Fprintf(&sb, ` LIMIT %d`, q.Limit+16)
	}
	return sb.String(), args
}

func queryShard(ctx context.Context, s *shard, q string, args []any) ([]candidate, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	sessions := map[string]*Session{}
	for rows.Next() {
		var c candidate
		var sp, sid, name, cwd string
		var format layout.Format
		if err := rows.Scan(&c.file, &c.fkind, &c.off, &c.n, &c.part, &c.kind, &c.tool, &c.ts, &c.entry, &sp, &sid, &name, &cwd, &format); err != nil {
			return nil, err
		}
		se := sessions[sp]
		if se == nil {
			se = &Session{Path: sp, ID: sid, Name: name, Cwd: cwd, Format: format}
			sessions[sp] = se
		}
		c.sess = se
		out = append(out, c)
	}
	return out, rows.Err()
}

// matches reports whether a candidate passes the query's filters other
// than the text (scan applies them; the index's query does in SQL).
func (q *Query) matches(c *candidate) bool {
	if q.Role != "" && c.kind.Role() != q.Role {
		return false
	}
	if q.Tool != "" && c.tool != q.Tool {
		return false
	}
	if !q.Since.IsZero() && c.ts < q.Since.UnixMilli() {
		return false
	}
	if !q.Until.IsZero() && (c.ts >= q.Until.UnixMilli() || c.ts == 0) {
		return false
	}
	if q.Cwd != "" {
		cwd := cleanCwd(q.Cwd)
		lo, _ := prefixBounds(cwd)
		if c.sess.Cwd != cwd && !strings.HasPrefix(c.sess.Cwd, lo) {
			return false
		}
	}
	return true
}

// cleanCwd cleans a working directory to compare it with the ones
// sessions record. One in the Unix form ("/home/dev/app") keeps it on
// every system: on Windows filepath.Clean would turn its separators into
// '\', and a session made on a Unix machine would never match.
func cleanCwd(cwd string) string {
	if strings.HasPrefix(cwd, "/") {
		return path.Clean(cwd)
	}
	return filepath.Clean(cwd)
}
