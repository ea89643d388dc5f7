package goose

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	pimessage "github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// SchemaVersion is the newest version of Goose's session database this
// importer reads (the schema_version table's highest row); a newer one is
// refused with an error naming it.
const SchemaVersion = 17

// Source is the Goose importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "goose".
func (Source) Name() string { return "goose" }

// Title returns "Goose".
func (Source) Title() string { return "Goose" }

// Locations returns the sessions directory of Goose's data directory, as
// Goose finds it: $GOOSE_PATH_ROOT/data when that is an absolute path;
// else on Windows %APPDATA%\Block\goose\data; else (Linux and macOS alike)
// $XDG_DATA_HOME/goose, default ~/.local/share/goose.
func (Source) Locations(l migrate.Locator) []string {
	if r := l.Env("GOOSE_PATH_ROOT"); r != "" && filepath.IsAbs(r) {
		return []string{filepath.Join(r, "data", "sessions")}
	}
	if l.GOOS == "windows" {
		app := l.Env("APPDATA")
		if app == "" {
			app = filepath.Join(l.Home, "AppData", "Roaming")
		}
		return []string{filepath.Join(app, "Block", "goose", "data", "sessions")}
	}
	data := l.Env("XDG_DATA_HOME")
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(l.Home, ".local", "share")
	}
	return []string{filepath.Join(data, "goose", "sessions")}
}

// storeLayout is what a path holds of Goose's.
type storeLayout struct {
	db    string   // sessions.db, "" for none
	jsonl []string // the legacy session files
}

// isGooseDB reports whether path is a Goose session database: one with
// Goose's schema_version, sessions and messages tables.
func isGooseDB(fsys vfs.FS, path string) bool {
	t, err := sqlitedb.Tables(fsys, path)
	return err == nil && t["schema_version"] && t["sessions"] && t["messages"]
}

// isLegacyFile reports whether path's first line is a Goose session
// file's: its metadata (working_dir, description, message_count) or a
// message (role, content).
func isLegacyFile(fsys vfs.FS, path string) bool {
	f, err := srcfs.Open(fsys, path)
	if err != nil {
		return false
	}
	defer f.Close()
	ok := false
	_ = migrate.EachLine(f, 0, func(_ int, line []byte, err error) bool {
		var m map[string]json.RawMessage
		if err == nil && json.Unmarshal(line, &m) == nil {
			_, role := m["role"]
			_, content := m["content"]
			_, desc := m["description"]
			_, count := m["message_count"]
			ok = role && content || desc && count
		}
		return false
	})
	return ok
}

func layoutOf(fsys vfs.FS, path string) (*storeLayout, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	l := &storeLayout{}
	if !st.IsDir() {
		switch {
		case strings.HasSuffix(abs, ".jsonl") && isLegacyFile(fsys, abs):
			l.jsonl = []string{abs}
		case isGooseDB(fsys, abs):
			l.db = abs
		default:
			return nil, fmt.Errorf("%s is not a Goose session database or session file", abs)
		}
		return l, nil
	}
	if s := filepath.Join(abs, "sessions"); srcfs.IsDir(fsys, s) && filepath.Base(abs) != "sessions" {
		if _, err := srcfs.Stat(fsys, filepath.Join(s, "sessions.db")); err == nil {
			abs = s
		}
	}
	if db := filepath.Join(abs, "sessions.db"); srcfs.IsFile(fsys, db) {
		if !isGooseDB(fsys, db) {
			return nil, fmt.Errorf("%s is not a Goose session database (no schema_version, sessions and messages tables)", db)
		}
		l.db = db
	}
	files := srcfs.Glob(fsys, filepath.Join(abs, "*.jsonl"))
	sort.Strings(files)
	for _, f := range files {
		if isLegacyFile(fsys, f) {
			l.jsonl = append(l.jsonl, f)
		}
	}
	if l.db == "" && len(l.jsonl) == 0 {
		return nil, fmt.Errorf("%s holds no Goose sessions (no sessions.db, no session files)", abs)
	}
	return l, nil
}

// Detect reports whether path is Goose's sessions directory (or the data
// directory above it), its sessions.db, or one of its session files.
func (Source) Detect(path string) bool {
	_, err := layoutOf(nil, path)
	return err == nil
}

// Open opens the database (refusing a schema newer than SchemaVersion)
// and lists the session files under path.
func (Source) Open(ctx context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	l, err := layoutOf(opts.FS, path)
	if err != nil {
		return nil, err
	}
	s := &store{l: l, opts: opts, sessions: map[string]*session{}, dup: map[string]string{}}
	if l.db != "" {
		db, err := sqlitedb.Open(opts.FS, l.db, opts.TempDir)
		if err != nil {
			return nil, err
		}
		s.db = db
		var v sql.NullInt64
		if err := db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil {
			db.Close()
			return nil, fmt.Errorf("read the schema version of %s: %w", l.db, err)
		}
		if v.Int64 > SchemaVersion {
			db.Close()
			return nil, fmt.Errorf("%s has Goose session schema version %d; this importer reads versions up to %d", l.db, v.Int64, SchemaVersion)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'usage_ledger'`).Scan(&n); err != nil {
			db.Close()
			return nil, fmt.Errorf("read the tables of %s: %w", l.db, err)
		}
		s.ledgered = n > 0
	}
	return s, nil
}

type store struct {
	l        *storeLayout
	opts     migrate.ImportOptions
	db       *sqlitedb.DB
	ledgered bool                // the database has the usage_ledger table (v15 and later)
	sessions map[string]*session // by ref key
	dup      map[string]string   // database session id -> its legacy file, read from the database
}

// session is a sessions row, or a legacy file's metadata.
type session struct {
	id, name, cwd, parent string
	created               time.Time
	provider, model       string
	// The last provider call's usage (sessions.input_tokens, ...), for a
	// database without the usage ledger.
	last pimessage.Usage
	file string // the legacy file
	// cwdLine is the line of the legacy file whose working_dir cwd is.
	cwdLine int
}

func (s *store) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return nil
}

// Sessions lists the database's sessions, parents before their subagent
// sessions, then the legacy files whose session is not in the database.
func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		var list []*session
		if s.db != nil {
			var err error
			if list, err = s.dbSessions(ctx); err != nil {
				yield(migrate.Ref{}, err)
				return
			}
		}
		inDB := map[string]bool{}
		for _, ss := range list {
			inDB[ss.id] = true
		}
		for _, f := range s.l.jsonl {
			id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
			if inDB[id] {
				s.dup[id] = f
				continue
			}
			list = append(list, &session{id: id, file: f})
		}
		if s.db != nil {
			// Messages of a session the sessions table does not have
			// cannot be imported; each such session is reported.
			orphans, err := s.orphanMessages(ctx, inDB)
			if err != nil {
				yield(migrate.Ref{}, err)
				return
			}
			for _, d := range orphans {
				if !yield(migrate.Ref{}, d) {
					return
				}
			}
		}
		for _, ss := range sqlitedb.ParentsFirst(list, sessionID, sessionParent, sessionCreated) {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			key, path := "db:"+ss.id, s.l.db
			if ss.file != "" {
				key, path = "file:"+ss.file, ss.file
			}
			s.sessions[key] = ss
			if !yield(migrate.Ref{ID: ss.id, Path: path, Key: key}, nil) {
				return
			}
		}
	}
}

// orphanMessages returns, for each session id the messages table names
// that is not among the sessions read (inDB), a Damage saying how many
// of its messages are not imported.
func (s *store) orphanMessages(ctx context.Context, inDB map[string]bool) ([]*migrate.Damage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, COUNT(*) FROM messages GROUP BY session_id ORDER BY session_id`)
	if err != nil {
		return nil, fmt.Errorf("list the sessions of the messages of %s: %w", s.l.db, err)
	}
	defer rows.Close()
	var out []*migrate.Damage
	for rows.Next() {
		var id sql.NullString
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("list the sessions of the messages of %s: %w", s.l.db, err)
		}
		if id.Valid && inDB[id.String] {
			continue
		}
		pos := "messages of session " + strconv.Quote(id.String)
		if !id.Valid {
			pos = "messages without a session"
		}
		what := fmt.Sprintf("%d messages name", n)
		if n == 1 {
			what = "1 message names"
		}
		out = append(out, &migrate.Damage{Path: s.l.db, Pos: pos,
			Err: fmt.Errorf("%s a session the sessions table does not have; not imported", what)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the sessions of the messages of %s: %w", s.l.db, err)
	}
	return out, nil
}

// absPath reports whether p is an absolute path on Unix or on Windows
// (Goose runs on both; a store may be read on another system): a
// working_dir that is not is not taken as a session's cwd.
func absPath(p string) bool {
	switch {
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, `\\`):
		return true
	case len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		c := p[0] | 0x20
		return c >= 'a' && c <= 'z'
	}
	return false
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

// sqlTime reads a sessions timestamp: SQLite's 'YYYY-MM-DD HH:MM:SS'
// (UTC) or RFC 3339 text, as the driver gives it.
func sqlTime(v any) (time.Time, bool) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), true
	}
	s := strings.TrimSpace(asString(v))
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return migrate.ParseTimeString(s)
}

// epoch reads a message's created time: Unix seconds, or milliseconds
// when above 1e10 (Goose reads it the same way).
func epoch(f float64) time.Time {
	if f > 1e10 {
		return time.UnixMilli(int64(f)).UTC()
	}
	return time.Unix(int64(f), 0).UTC()
}

func (s *store) dbSessions(ctx context.Context) ([]*session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", s.l.db, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", s.l.db, err)
	}
	var out []*session
	for rows.Next() {
		r, err := sqlitedb.ScanRow(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("list sessions of %s: %w", s.l.db, err)
		}
		ss := &session{id: asString(r["id"]), name: asString(r["name"]), cwd: asString(r["working_dir"]),
			parent: asString(r["parent_session_id"]), provider: asString(r["provider_name"])}
		if ss.name == "" {
			ss.name = asString(r["description"])
		}
		ss.created, _ = sqlTime(r["created_at"])
		var mc struct {
			ModelName string `json:"model_name"`
		}
		if json.Unmarshal([]byte(asString(r["model_config_json"])), &mc) == nil {
			ss.model = mc.ModelName
		}
		ss.last = pimessage.Usage{Input: migrate.Tokens(asFloat(r["input_tokens"])), Output: migrate.Tokens(asFloat(r["output_tokens"])),
			CacheRead: migrate.Tokens(asFloat(r["cache_read_tokens"])), CacheWrite: migrate.Tokens(asFloat(r["cache_write_tokens"])), TotalTokens: migrate.Tokens(asFloat(r["total_tokens"]))}
		if ss.id != "" {
			out = append(out, ss)
		}
	}
	return out, rows.Err()
}

// message is one Goose message: a messages row or a legacy file's line.
type message struct {
	key     string // unique in the session, stable: the row id or line
	role    string
	created time.Time
	content []json.RawMessage
	meta    *visibility
}

// visibility is a message's metadata.
type visibility struct {
	UserVisible  bool `json:"userVisible"`
	AgentVisible bool `json:"agentVisible"`
}

// ledger is one usage_ledger row.
type ledger struct {
	created    time.Time
	usage      pimessage.Usage
	compaction bool
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	ss := s.sessions[ref.Key]
	if ss == nil {
		return nil, fmt.Errorf("goose: unknown session %q", ref.Key)
	}
	conv := &migrate.Conversion{}
	var msgs []*message
	var usage []ledger
	var err error
	m := migrate.Meta{SourcePath: ref.Path, ParentSourceID: ss.parent}
	if ss.file != "" {
		msgs, err = s.fileMessages(ctx, ss, conv)
		if err != nil {
			return nil, err
		}
		if ss.created.IsZero() {
			if st, err := srcfs.Stat(s.opts.FS, ss.file); err == nil {
				ss.created = st.ModTime().UTC()
				m.DateFromFile = true
			}
		}
	} else {
		if msgs, err = s.dbMessages(ctx, ss.id, conv); err != nil {
			return nil, err
		}
		if usage, err = s.ledger(ctx, ss.id); err != nil {
			return nil, err
		}
		if f := s.dup[ss.id]; f != "" {
			conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: ss.id, Path: f,
				Reason: "the same session is in " + filepath.Base(s.l.db) + ", which was read instead"})
		}
	}
	m.Start = ss.created
	if m.Start.IsZero() && len(msgs) > 0 {
		m.Start = msgs[0].created
	}
	switch {
	case absPath(ss.cwd):
		m.Cwd, m.CwdKnown = ss.cwd, true
	case ss.cwd != "":
		// A relative working_dir (../../../etc) names no directory: the
		// session's cwd is unknown, and the field is reported.
		d := &migrate.Damage{Path: s.l.db, Pos: "session " + strconv.Quote(ss.id)}
		if ss.file != "" {
			d = &migrate.Damage{Path: ss.file, Line: ss.cwdLine}
		}
		d.Err = fmt.Errorf("working_dir %q is not an absolute path; the session is imported with an unknown cwd", ss.cwd)
		conv.Damage = append(conv.Damage, d)
		fallthrough
	default:
		m.Cwd = s.opts.Cwd
	}
	c := newConverter(ss, usage, len(msgs))
	c.run(msgs)
	if c.b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: ss.id, Path: ref.Path, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if ss.name != "" {
		c.b.SetName(ss.name)
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

func (s *store) dbMessages(ctx context.Context, id string, conv *migrate.Conversion) ([]*message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM messages WHERE session_id = ? ORDER BY created_timestamp, id`, id)
	if err != nil {
		return nil, fmt.Errorf("read messages of %s in %s: %w", id, s.l.db, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []*message
	for rows.Next() {
		r, err := sqlitedb.ScanRow(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("read messages of %s in %s: %w", id, s.l.db, err)
		}
		rowID := asString(r["id"])
		msg := &message{key: "m" + rowID, role: asString(r["role"]), created: epoch(asFloat(r["created_timestamp"]))}
		pos := "message " + rowID
		if err := migrate.DecodeJSON([]byte(asString(r["content_json"])), &msg.content); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: s.l.db, Pos: pos, Err: fmt.Errorf("content_json: %w", err)})
			continue
		}
		if md := strings.TrimSpace(asString(r["metadata_json"])); md != "" && md != "null" {
			if err := migrate.DecodeJSON([]byte(md), &msg.meta); err != nil {
				conv.Damage = append(conv.Damage, &migrate.Damage{Path: s.l.db, Pos: pos, Err: fmt.Errorf("metadata_json: %w", err)})
				continue
			}
		}
		out = append(out, msg)
	}
	return out, rows.Err()
}

// ledger reads the session's usage_ledger rows (schema v15 and later).
func (s *store) ledger(ctx context.Context, id string) ([]ledger, error) {
	if !s.ledgered {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM usage_ledger WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read the usage of %s in %s: %w", id, s.l.db, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []ledger
	for rows.Next() {
		r, err := sqlitedb.ScanRow(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("read the usage of %s in %s: %w", id, s.l.db, err)
		}
		out = append(out, ledger{
			created:    epoch(asFloat(r["created_timestamp"])),
			compaction: asFloat(r["is_compaction"]) != 0,
			usage: pimessage.Usage{Input: migrate.Tokens(asFloat(r["input_tokens"])), Output: migrate.Tokens(asFloat(r["output_tokens"])),
				CacheRead: migrate.Tokens(asFloat(r["cache_read_tokens"])), CacheWrite: migrate.Tokens(asFloat(r["cache_write_tokens"])),
				TotalTokens: migrate.Tokens(asFloat(r["total_tokens"])), Cost: pimessage.Cost{Total: asFloat(r["cost"])}},
		})
	}
	return out, rows.Err()
}

// fileMessages reads a legacy session file: its metadata line, then one
// message per line.
func (s *store) fileMessages(ctx context.Context, ss *session, conv *migrate.Conversion) ([]*message, error) {
	f, err := srcfs.OpenTracked(s.opts.FS, ss.file, s.opts.Progress)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*message
	first := true
	err = migrate.EachLine(f, s.opts.MaxLine, func(n int, line []byte, err error) bool {
		if ctx.Err() != nil {
			return false
		}
		var v struct {
			Role       *string           `json:"role"`
			Created    float64           `json:"created"`
			Content    []json.RawMessage `json:"content"`
			Metadata   *visibility       `json:"metadata"`
			WorkingDir string            `json:"working_dir"`
			Desc       string            `json:"description"`
		}
		if err == nil {
			err = migrate.DecodeLine(line, &v)
		}
		if err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ss.file, Line: n, Err: err})
			first = false
			return true
		}
		if first && v.Role == nil {
			ss.cwd, ss.name, ss.cwdLine = v.WorkingDir, v.Desc, n
			first = false
			return true
		}
		first = false
		if v.Role == nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ss.file, Line: n, Err: errors.New("a line without a role")})
			return true
		}
		out = append(out, &message{key: "L" + strconv.Itoa(n), role: *v.Role, created: epoch(v.Created), content: v.Content, meta: v.Metadata})
		return true
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, &migrate.Damage{Path: ss.file, Err: err}
	}
	if len(out) > 0 && ss.created.IsZero() {
		ss.created = out[0].created
	}
	return out, nil
}

// converter turns one session's messages into a chain of entries.
type converter struct {
	b        *migrate.Builder
	tip      *migrate.Node
	ss       *session
	usage    []ledger // the calls that made replies, in order
	comps    []ledger // the summarization calls, in order
	asstN    int      // assistant messages converted so far
	asstAll  int      // assistant messages in the session
	pending  []call   // tool calls of the last assistant message without a result yet
	lastTime time.Time
}

type call struct{ id, name string }

func newConverter(ss *session, usage []ledger, _ int) *converter {
	c := &converter{b: migrate.NewBuilder("goose", ss.id), ss: ss}
	for _, u := range usage {
		if u.compaction {
			c.comps = append(c.comps, u)
		} else {
			c.usage = append(c.usage, u)
		}
	}
	return c
}

// item is one MessageContent.
type item struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Data        json.RawMessage `json:"data"`
	MimeType    string          `json:"mimeType"`
	Thinking    string          `json:"thinking"`
	Signature   string          `json:"signature"`
	ID          string          `json:"id"`
	ToolCall    *toolStatus     `json:"toolCall"`
	ToolResult  *toolStatus     `json:"toolResult"`
	Annotations json.RawMessage `json:"annotations"`
}

// toolStatus is a tool request's call or a tool response's result:
// {"status":"success","value":...} or {"status":"error","error":...}.
type toolStatus struct {
	Status string          `json:"status"`
	Value  json.RawMessage `json:"value"`
	Error  json.RawMessage `json:"error"`
}

// compactionAt reports whether msgs[i] is the summary of a compaction:
// a user message only the agent sees, after messages the agent no longer
// sees.
func compactionAt(msgs []*message, i int) bool {
	m := msgs[i]
	if i == 0 || m.role != "user" || m.meta == nil || m.meta.UserVisible || !m.meta.AgentVisible {
		return false
	}
	p := msgs[i-1].meta
	return p != nil && !p.AgentVisible
}

// continuationAt reports whether msgs[i] is the assistant message Goose
// puts after a compaction's summary ("Your context was compacted..."),
// which no model call made.
func continuationAt(msgs []*message, i int) bool {
	return i > 0 && msgs[i].role == "assistant" && compactionAt(msgs, i-1)
}

func (c *converter) run(msgs []*message) {
	last := -1
	for i := range msgs {
		if msgs[i].role == "assistant" && !continuationAt(msgs, i) {
			c.asstAll++
		}
		if compactionAt(msgs, i) {
			last = i
		}
	}
	comp := 0
	for i, m := range msgs {
		c.lastTime = m.created
		switch {
		case compactionAt(msgs, i):
			c.flushPending(m)
			tokens := 0.0
			if comp < len(c.comps) {
				u := c.comps[comp].usage
				tokens = float64(u.Input + u.CacheRead)
			}
			comp++
			var texts []string
			for _, raw := range m.content {
				var it item
				if json.Unmarshal(raw, &it) == nil && it.Type == "text" {
					texts = append(texts, it.Text)
				}
			}
			c.tip = c.b.Compaction(m.key, c.tip, m.created, strings.Join(texts, "\n"), tokens, nil)
		case i > last && m.meta != nil && !m.meta.AgentVisible:
			// Shown to the user only (a notification), or to nobody: kept
			// out of the context.
			c.custom(m, "goose-message", m.content)
		case m.role == "assistant":
			c.flushPending(m)
			c.assistant(m, !continuationAt(msgs, i))
		case m.role == "user":
			c.user(m)
		default:
			c.custom(m, "goose-message", m.content)
		}
	}
	c.flushPending(nil)
}

// custom keeps a message, or the items of one that have no place in pi's
// messages, as a custom entry {"role","content","metadata"?} out of the
// context.
func (c *converter) custom(m *message, key string, items []json.RawMessage) {
	b := jsonl.NewObject(256).String("role", m.role).Raw("content", canonicalArray(items))
	if m.meta != nil {
		b.Raw("metadata", jsonl.NewObject(64).Bool("userVisible", m.meta.UserVisible).Bool("agentVisible", m.meta.AgentVisible).Bytes())
	}
	c.tip = c.b.Custom(m.key+"/"+key, c.tip, m.created, key, b.Bytes())
}

func canonicalArray(items []json.RawMessage) []byte {
	out := make([][]byte, 0, len(items))
	for _, it := range items {
		if b, err := jsonl.Canonical(nil, it); err == nil {
			out = append(out, b)
		}
	}
	return migrate.Array(out)
}

// flushPending answers the tool calls that got no result before m (or
// the end) with an error result saying so.
func (c *converter) flushPending(m *message) {
	t := c.lastTime
	for _, p := range c.pending {
		msg := migrate.ToolResultMessage(p.id, p.name, migrate.TextContent("(no result recorded)"), nil, true, migrate.Millis(t))
		c.tip = c.b.Message("noresult/"+p.id, c.tip, t, msg)
	}
	c.pending = nil
}

// api names pi's API for a Goose provider.
func api(provider string) string {
	switch {
	case strings.Contains(provider, "anthropic"):
		return "anthropic-messages"
	case strings.Contains(provider, "google"), strings.Contains(provider, "gemini"):
		return "google-generative-ai"
	}
	return "openai-completions"
}

func (c *converter) assistant(m *message, reply bool) {
	provider, model := c.ss.provider, c.ss.model
	if provider == "" {
		provider = migrate.UnknownProvider
	}
	if model == "" {
		model = migrate.UnknownModel
	}
	a := migrate.Assistant{API: api(provider), Provider: provider, Model: model, Timestamp: migrate.Millis(m.created)}
	var other []json.RawMessage
	var calls []call
	for _, raw := range m.content {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			other = append(other, raw)
			continue
		}
		switch it.Type {
		case "text":
			a.Content = append(a.Content, migrate.TextBlock(it.Text))
		case "thinking":
			a.Content = append(a.Content, migrate.ThinkingBlock(it.Thinking, it.Signature, false))
		case "redactedThinking":
			a.Content = append(a.Content, migrate.ThinkingBlock("", jsonString(it.Data), true))
		case "toolRequest", "frontendToolRequest":
			name, args := toolCall(it.ToolCall)
			a.Content = append(a.Content, migrate.ToolCallBlock(it.ID, name, args))
			calls = append(calls, call{it.ID, name})
		default:
			other = append(other, raw)
		}
	}
	if len(a.Content) == 0 {
		if len(other) > 0 {
			c.custom(m, "goose-content", other)
		}
		return
	}
	if reply {
		if c.asstN < len(c.usage) && len(c.usage) == c.asstAll {
			a.Usage = c.usage[c.asstN].usage
		} else if len(c.usage) == 0 && c.asstN == c.asstAll-1 {
			a.Usage = c.ss.last
		}
		c.asstN++
	}
	c.tip = c.b.Message(m.key, c.tip, m.created, a.JSON())
	c.pending = calls
	if len(other) > 0 {
		c.custom(m, "goose-content", other)
	}
}

// toolCall returns a tool request's name and arguments; a request Goose
// could not parse gets the name "invalid_tool_call" and its error.
func toolCall(tc *toolStatus) (string, []byte) {
	if tc == nil {
		return "invalid_tool_call", []byte("{}")
	}
	var v struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if tc.Status == "success" && json.Unmarshal(tc.Value, &v) == nil && v.Name != "" {
		return v.Name, migrate.ObjectArgs(v.Arguments)
	}
	return "invalid_tool_call", jsonl.NewObject(64).String("error", errText(tc.Error)).Bytes()
}

func errText(raw json.RawMessage) string {
	if s, ok := jsonl.String(raw); ok {
		return s
	}
	return migrate.JSONText(raw)
}

func jsonString(raw json.RawMessage) string {
	s, _ := jsonl.String(raw)
	return s
}

// user converts a user message: its tool responses become toolResult
// messages (answering the last assistant message's calls), its text and
// images a user message after them.
func (c *converter) user(m *message) {
	var blocks [][]byte
	var other []json.RawMessage
	for _, raw := range m.content {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			other = append(other, raw)
			continue
		}
		switch it.Type {
		case "text":
			blocks = append(blocks, migrate.TextBlock(it.Text))
		case "image":
			blocks = append(blocks, migrate.ImageBlock(jsonString(it.Data), it.MimeType))
		case "toolResponse":
			if !c.result(m, &it) {
				other = append(other, raw)
			}
		default:
			other = append(other, raw)
		}
	}
	if len(blocks) > 0 {
		c.flushPending(m)
		c.tip = c.b.Message(m.key, c.tip, m.created, migrate.UserMessage(migrate.Array(blocks), migrate.Millis(m.created)))
	}
	if len(other) > 0 {
		c.custom(m, "goose-content", other)
	}
}

// result converts a tool response to the toolResult of a pending call;
// false when no call is waiting for it.
func (c *converter) result(m *message, it *item) bool {
	at := -1
	for i, p := range c.pending {
		if p.id == it.ID {
			at = i
		}
	}
	if at < 0 {
		return false
	}
	p := c.pending[at]
	c.pending = append(c.pending[:at:at], c.pending[at+1:]...)
	content, isErr := resultContent(it.ToolResult)
	msg := migrate.ToolResultMessage(p.id, p.name, content, nil, isErr, migrate.Millis(m.created))
	c.tip = c.b.Message(m.key+"/"+p.id, c.tip, m.created, msg)
	return true
}

// resultContent converts a tool result: {"status":"success","value":
// {"content":[...],"isError"?}} (older sessions: the bare content array)
// or {"status":"error","error":"..."}.
func resultContent(tr *toolStatus) ([]byte, bool) {
	if tr == nil {
		return migrate.TextContent("(no result recorded)"), true
	}
	if tr.Status != "success" {
		return migrate.TextContent(errText(tr.Error)), true
	}
	var parts []json.RawMessage
	isErr := false
	var v struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError"`
	}
	if json.Unmarshal(tr.Value, &parts) != nil {
		if json.Unmarshal(tr.Value, &v) == nil {
			parts, isErr = v.Content, v.IsError
		}
	}
	var blocks [][]byte
	for _, raw := range parts {
		var p struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			Resource *struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"resource"`
		}
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		switch p.Type {
		case "text":
			blocks = append(blocks, migrate.TextBlock(p.Text))
		case "image":
			blocks = append(blocks, migrate.ImageBlock(p.Data, p.MimeType))
		case "resource":
			if p.Resource != nil {
				text := p.Resource.Text
				if text == "" {
					text = "[resource: " + p.Resource.URI + "]"
				}
				blocks = append(blocks, migrate.TextBlock(text))
			}
		default:
			blocks = append(blocks, migrate.TextBlock(migrate.JSONText(raw)))
		}
	}
	if len(blocks) == 0 {
		blocks = [][]byte{migrate.TextBlock("")}
	}
	return migrate.Array(blocks), isErr
}

func sessionID(s *session) string         { return s.id }
func sessionParent(s *session) string     { return s.parent }
func sessionCreated(s *session) time.Time { return s.created }
