package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the opencode importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "opencode".
func (Source) Name() string { return "opencode" }

// Title returns "opencode".
func (Source) Title() string { return "opencode" }

// Locations returns OPENCODE_DB when set, and the data directory
// $XDG_DATA_HOME/opencode (default ~/.local/share/opencode).
func (Source) Locations(l migrate.Locator) []string {
	data := l.Env("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(l.Home, ".local", "share")
	}
	out := []string{filepath.Join(data, "opencode")}
	if db := l.Env("OPENCODE_DB"); db != "" {
		out = append([]string{db}, out...)
	}
	return out
}

// Detect reports whether path is an opencode data directory (with
// storage/ or opencode*.db), its storage directory, or a database.
func (Source) Detect(path string) bool {
	l, err := layoutOf(nil, path)
	return err == nil && (l.storage != "" || len(l.dbs) > 0)
}

type storeLayout struct {
	storage string   // the legacy JSON storage directory
	dbs     []string // the databases
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
		if !sqlitedb.IsSQLite(fsys, abs) {
			return nil, fmt.Errorf("%s is not an opencode database", abs)
		}
		l.dbs = []string{abs}
		return l, nil
	}
	switch {
	case srcfs.IsDir(fsys, filepath.Join(abs, "storage", "session")):
		l.storage = filepath.Join(abs, "storage")
	case srcfs.IsDir(fsys, filepath.Join(abs, "session")) && srcfs.IsDir(fsys, filepath.Join(abs, "message")):
		l.storage = abs
	}
	dbs := srcfs.Glob(fsys, filepath.Join(abs, "opencode*.db"))
	sort.Strings(dbs)
	for _, db := range dbs {
		if sqlitedb.IsSQLite(fsys, db) {
			l.dbs = append(l.dbs, db)
		}
	}
	if l.storage == "" && len(l.dbs) == 0 {
		return nil, fmt.Errorf("%s holds no opencode sessions (no storage directory, no opencode.db)", abs)
	}
	return l, nil
}

// Open opens the databases and indexes the JSON sessions under path.
func (Source) Open(ctx context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	l, err := layoutOf(opts.FS, path)
	if err != nil {
		return nil, err
	}
	s := &store{l: l, opts: opts, sessions: map[string]*sessionRef{}}
	for _, p := range l.dbs {
		db, err := sqlitedb.Open(opts.FS, p, opts.TempDir)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.dbs = append(s.dbs, db)
	}
	return s, nil
}

type store struct {
	l        *storeLayout
	opts     migrate.ImportOptions
	dbs      []*sqlitedb.DB
	sessions map[string]*sessionRef
}

// sessionRef is where one session lives.
type sessionRef struct {
	info session
	db   *sqlitedb.DB // nil for a JSON session
	file string       // the JSON session file
	// v2 is true for a session_v2 row (opencode 2): its messages are the
	// session_message rows only (the v1 rows of a session opencode
	// migrated to v2 are copies of them).
	v2 bool
}

// session is a session record (JSON file or database row).
type session struct {
	ID       string `json:"id"`
	ParentID string `json:"parentID"`
	// ForkOf is session_v2.fork_session_id (opencode 2): the session this
	// one was forked from.
	ForkOf    string `json:"-"`
	Directory string `json:"directory"`
	Title     string `json:"title"`
	Version   string `json:"version"`
	Time      struct {
		Created float64 `json:"created"`
	} `json:"time"`
	Revert *struct {
		MessageID string `json:"messageID"`
	} `json:"revert"`
}

func (s *store) Close() error {
	var first error
	for _, db := range s.dbs {
		if err := db.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Sessions lists the sessions of the databases and of the JSON storage
// (a database's copy wins), oldest first, so parents come before their
// subagent sessions.
func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		var errs []error
		for _, db := range s.dbs {
			if err := s.dbSessions(ctx, db); err != nil {
				errs = append(errs, err)
			}
		}
		if s.l.storage != "" {
			errs = append(errs, s.jsonSessions()...)
		}
		for _, err := range errs {
			if !yield(migrate.Ref{}, err) {
				return
			}
		}
		refs := make([]*sessionRef, 0, len(s.sessions))
		for _, r := range s.sessions {
			refs = append(refs, r)
		}
		sort.Slice(refs, func(i, j int) bool {
			if refs[i].info.Time.Created != refs[j].info.Time.Created {
				return refs[i].info.Time.Created < refs[j].info.Time.Created
			}
			return refs[i].info.ID < refs[j].info.ID
		})
		for _, r := range refs {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			path := r.file
			if r.db != nil {
				path = r.db.Path
			}
			if !yield(migrate.Ref{ID: r.info.ID, Path: path, Key: r.info.ID}, nil) {
				return
			}
		}
	}
}

// dbSessions reads the sessions of a database: opencode 2's session_v2
// table first, then the session table (opencode 1.2 to 1.18, and the
// sessions opencode 2 did not migrate) for the ids session_v2 lacks, so a
// migrated session is read once, from its v2 copy. A database with
// neither table is reported, naming the tables it has.
func (s *store) dbSessions(ctx context.Context, db *sqlitedb.DB) error {
	tables, err := tableNames(ctx, db)
	if err != nil {
		return fmt.Errorf("list sessions of %s: %w", db.Path, err)
	}
	if !tables["session"] && !tables["session_v2"] {
		var names []string
		for n := range tables {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("%s has neither opencode's session nor its session_v2 table: a schema this importer does not know (tables: %s)", db.Path, strings.Join(names, ", "))
	}
	if tables["session_v2"] {
		if err := s.readSessions(ctx, db, "session_v2", true); err != nil {
			return err
		}
	}
	if tables["session"] {
		return s.readSessions(ctx, db, "session", false)
	}
	return nil
}

// tableNames returns the names of db's tables.
func tableNames(ctx context.Context, db *sqlitedb.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

// readSessions reads a session table, whatever columns this version has.
func (s *store) readSessions(ctx context.Context, db *sqlitedb.DB, table string, v2 bool) error {
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+table)
	if err != nil {
		return fmt.Errorf("list sessions of %s: %w", db.Path, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("list sessions of %s: %w", db.Path, err)
		}
		var info session
		for i, c := range cols {
			v := vals[i]
			switch c {
			case "id":
				info.ID = asString(v)
			case "parent_id":
				info.ParentID = asString(v)
			case "fork_session_id":
				if v2 {
					info.ForkOf = asString(v)
				}
			case "directory":
				info.Directory = asString(v)
			case "title":
				info.Title = asString(v)
			case "version":
				info.Version = asString(v)
			case "time_created":
				info.Time.Created = asFloat(v)
			case "revert":
				if r := asString(v); r != "" {
					_ = json.Unmarshal([]byte(r), &info.Revert)
				}
			}
		}
		if info.ID != "" {
			if _, dup := s.sessions[info.ID]; !dup {
				s.sessions[info.ID] = &sessionRef{info: info, db: db, v2: v2}
			}
		}
	}
	return rows.Err()
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// jsonSessions indexes storage/session/**/*.json.
func (s *store) jsonSessions() []error {
	var errs []error
	root := filepath.Join(s.l.storage, "session")
	_ = srcfs.WalkDir(s.opts.FS, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		data, err := srcfs.ReadFile(s.opts.FS, p)
		if err != nil {
			errs = append(errs, &migrate.Damage{Path: p, Err: err})
			return nil
		}
		var info session
		if err := migrate.DecodeJSON(data, &info); err != nil {
			errs = append(errs, &migrate.Damage{Path: p, Err: err})
			return nil
		}
		if info.ID == "" {
			return nil
		}
		if _, dup := s.sessions[info.ID]; !dup {
			s.sessions[info.ID] = &sessionRef{info: info, file: p}
		}
		return nil
	})
	return errs
}

// msg is a message record: its info and its parts, in id order; or a
// session_message row of the v2 API (v2 set, v2m its data).
type msg struct {
	id    string
	info  msgInfo
	parts []part
	v2    *v2Row
	v2m   v2Msg
}

type msgInfo struct {
	Role string `json:"role"`
	Time struct {
		Created float64 `json:"created"`
	} `json:"time"`
	ModelID    string `json:"modelID"`
	ProviderID string `json:"providerID"`
	Model      *struct {
		ProviderID string `json:"providerID"`
		ModelID    string `json:"modelID"`
	} `json:"model"`
	Summary json.RawMessage `json:"summary"`
	Cost    float64         `json:"cost"`
	Tokens  *tokens         `json:"tokens"`
	Finish  string          `json:"finish"`
	Error   *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

type tokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

type part struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Synthetic bool            `json:"synthetic"`
	Ignored   bool            `json:"ignored"`
	Mime      string          `json:"mime"`
	Filename  string          `json:"filename"`
	URL       string          `json:"url"`
	CallID    string          `json:"callID"`
	Tool      string          `json:"tool"`
	State     *toolState      `json:"state"`
	Cost      float64         `json:"cost"`
	Tokens    *tokens         `json:"tokens"`
	Metadata  json.RawMessage `json:"metadata"`
}

type toolState struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input"`
	Output string          `json:"output"`
	Error  string          `json:"error"`
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	r := s.sessions[ref.Key]
	if r == nil {
		return nil, fmt.Errorf("opencode: unknown session %q", ref.Key)
	}
	conv := &migrate.Conversion{}
	var msgs []*msg
	var err error
	switch {
	case r.v2:
		msgs, err = s.v2Messages(ctx, r.db, r.info.ID, conv)
	case r.db != nil:
		msgs, err = s.dbMessages(ctx, r.db, r.info.ID, conv)
		if err == nil {
			var v2 []*msg
			v2, err = s.v2Messages(ctx, r.db, r.info.ID, conv)
			msgs = mergeByTime(msgs, v2)
		}
	default:
		msgs, err = s.jsonMessages(r.info.ID, conv)
	}
	if err != nil {
		return nil, err
	}
	m := migrate.Meta{SourcePath: ref.Path, SourceVersion: r.info.Version, ParentSourceID: r.info.ParentID}
	m.Start = time.UnixMilli(int64(r.info.Time.Created)).UTC()
	if r.info.Directory != "" {
		m.Cwd, m.CwdKnown = r.info.Directory, true
	} else {
		m.Cwd = s.opts.Cwd
	}
	c := &converter{b: migrate.NewBuilder("opencode", r.info.ID)}
	if r.info.ForkOf != "" {
		m.ParentSourceID = r.info.ForkOf
		msgs = s.forkPrefix(ctx, c, r, msgs)
	}
	var revertLeaf *migrate.Node
	reverted := false
	for _, mm := range msgs {
		if r.info.Revert != nil && !reverted && mm.id == r.info.Revert.MessageID {
			reverted, revertLeaf = true, c.tip
		}
		c.message(mm)
	}
	if c.b.Len() == c.forkEntries {
		reason := migrate.SkipEmpty
		switch {
		case c.dropped > 0 && len(msgs) == 0:
			reason = "a fork with nothing of its own after what it copied of " + r.info.ForkOf
		case len(msgs) > 0:
			reason = fmt.Sprintf("%d messages, none with content", len(msgs))
			if len(msgs) == 1 {
				reason = "1 message, without content"
			}
		}
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: r.info.ID, Path: ref.Path, Reason: reason})
		return conv, nil
	}
	if revertLeaf != nil {
		c.b.SetLeaf(revertLeaf)
	}
	if r.info.Title != "" {
		c.b.SetName(r.info.Title)
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

func (s *store) dbMessages(ctx context.Context, db *sqlitedb.DB, sessionID string, conv *migrate.Conversion) ([]*msg, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, data FROM message WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read messages of %s in %s: %w", sessionID, db.Path, err)
	}
	var msgs []*msg
	byID := map[string]*msg{}
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return nil, err
		}
		m := &msg{id: id}
		if err := migrate.DecodeJSON([]byte(data), &m.info); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: db.Path, Pos: "message " + id, Err: err})
			continue
		}
		msgs = append(msgs, m)
		byID[id] = m
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, err
	}
	prows, err := db.QueryContext(ctx, `SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read parts of %s in %s: %w", sessionID, db.Path, err)
	}
	defer prows.Close()
	for prows.Next() {
		var id, mid string
		var data sql.NullString
		if err := prows.Scan(&id, &mid, &data); err != nil {
			return nil, err
		}
		m := byID[mid]
		if m == nil {
			continue
		}
		var p part
		if err := migrate.DecodeJSON([]byte(data.String), &p); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: db.Path, Pos: "part " + id, Err: err})
			continue
		}
		m.parts = append(m.parts, p)
	}
	return msgs, prows.Err()
}

func (s *store) jsonMessages(sessionID string, conv *migrate.Conversion) ([]*msg, error) {
	files := srcfs.Glob(s.opts.FS, filepath.Join(s.l.storage, "message", sessionID, "*.json"))
	sort.Strings(files)
	var msgs []*msg
	for _, f := range files {
		data, err := srcfs.ReadFile(s.opts.FS, f)
		if err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: f, Err: err})
			continue
		}
		var head struct {
			ID string `json:"id"`
		}
		m := &msg{}
		if err := migrate.DecodeJSON(data, &m.info); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: f, Err: err})
			continue
		}
		_ = json.Unmarshal(data, &head)
		m.id = head.ID
		if m.id == "" {
			m.id = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		pfiles := srcfs.Glob(s.opts.FS, filepath.Join(s.l.storage, "part", m.id, "*.json"))
		sort.Strings(pfiles)
		for _, pf := range pfiles {
			pdata, err := srcfs.ReadFile(s.opts.FS, pf)
			var p part
			if err == nil {
				err = migrate.DecodeJSON(pdata, &p)
			}
			if err != nil {
				conv.Damage = append(conv.Damage, &migrate.Damage{Path: pf, Err: err})
				continue
			}
			m.parts = append(m.parts, p)
		}
		msgs = append(msgs, m)
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].id < msgs[j].id })
	return msgs, nil
}

type converter struct {
	b   *migrate.Builder
	tip *migrate.Node
	// forkEntries is how many entries the fork entry made and dropped the
	// copied messages left out (see forkPrefix): a fork with nothing
	// after them is empty.
	forkEntries, dropped int
	// lastTokens is the context size the last assistant message reports,
	// a v2 compaction's tokensBefore.
	lastTokens float64
}

// api names pi's API for an opencode provider.
func api(provider string) string {
	switch provider {
	case "anthropic":
		return "anthropic-messages"
	case "openai":
		return "openai-responses"
	case "google":
		return "google-generative-ai"
	}
	return "openai-completions"
}

func (c *converter) message(m *msg) {
	if m.v2 != nil {
		c.v2message(m)
		return
	}
	t := time.UnixMilli(int64(m.info.Time.Created)).UTC()
	ms := migrate.Millis(t)
	switch m.info.Role {
	case "user":
		c.user(m, t, ms)
	case "assistant":
		provider, model := m.info.ProviderID, m.info.ModelID
		if summary := strings.TrimSpace(string(m.info.Summary)); summary == "true" {
			var texts []string
			for _, p := range m.parts {
				if p.Type == "text" {
					texts = append(texts, p.Text)
				}
			}
			tokensBefore := 0.0
			if m.info.Tokens != nil {
				tokensBefore = m.info.Tokens.Input + m.info.Tokens.Cache.Read
			}
			c.tip = c.b.Compaction(m.id, c.tip, t, strings.Join(texts, "\n"), tokensBefore, nil)
			return
		}
		steps := split(m.parts)
		for i, st := range steps {
			a := migrate.Assistant{API: api(provider), Provider: provider, Model: model, Timestamp: ms}
			var tools []part
			for _, p := range st.parts {
				switch p.Type {
				case "text":
					if !p.Ignored {
						a.Content = append(a.Content, migrate.TextBlock(p.Text))
					}
				case "reasoning":
					a.Content = append(a.Content, migrate.ThinkingBlock(p.Text, "", false))
				case "tool":
					var input json.RawMessage
					if p.State != nil {
						input = p.State.Input
					}
					a.Content = append(a.Content, migrate.ToolCallBlock(p.CallID, p.Tool, migrate.ObjectArgs(input)))
					tools = append(tools, p)
				}
			}
			last := i == len(steps)-1
			if st.finish != nil {
				if tk := st.finish.Tokens; tk != nil {
					c.lastTokens = tk.Input + tk.Cache.Read + tk.Output + tk.Reasoning
					a.Usage = message.Usage{Input: migrate.Tokens(tk.Input), Output: migrate.Tokens(tk.Output + tk.Reasoning), CacheRead: migrate.Tokens(tk.Cache.Read), CacheWrite: migrate.Tokens(tk.Cache.Write), Cost: message.Cost{Total: st.finish.Cost}}
				}
			} else if last && m.info.Tokens != nil {
				tk := m.info.Tokens
				a.Usage = message.Usage{Input: migrate.Tokens(tk.Input), Output: migrate.Tokens(tk.Output + tk.Reasoning), CacheRead: migrate.Tokens(tk.Cache.Read), CacheWrite: migrate.Tokens(tk.Cache.Write), Cost: message.Cost{Total: m.info.Cost}}
			}
			if last {
				switch m.info.Finish {
				case "length":
					a.StopReason = "length"
				case "stop":
					if len(tools) == 0 {
						a.StopReason = "stop"
					}
				}
				if e := m.info.Error; e != nil {
					a.StopReason = "error"
					if e.Name == "MessageAbortedError" {
						a.StopReason = "aborted"
					}
					a.ErrorMessage = e.Data.Message
					if a.ErrorMessage == "" {
						a.ErrorMessage = e.Name
					}
				}
			}
			key := m.id
			if i > 0 {
				key = fmt.Sprintf("%s/step%d", m.id, i)
			}
			c.tip = c.b.Message(key, c.tip, t, a.JSON())
			for _, p := range tools {
				text, isErr := "(the tool did not finish)", true
				if p.State != nil {
					switch p.State.Status {
					case "completed":
						text, isErr = p.State.Output, false
					case "error":
						text = p.State.Error
					}
				}
				msg := migrate.ToolResultMessage(p.CallID, p.Tool, migrate.TextContent(text), nil, isErr, ms)
				c.tip = c.b.Message(key+"/"+p.CallID, c.tip, t, msg)
			}
		}
	}
}

// user converts a user message. Its parts go to the model in order; runs
// of parts the user wrote become user messages, runs of synthetic parts
// (text and files opencode adds: "The following tool was executed by the
// user" before a shell command, "Called the Read tool with ..." and the
// file itself for an attachment) custom_message entries
// "opencode-synthetic" (display false), which enter the context as user
// messages too but are not something the user typed. Ignored parts are
// left out, as opencode leaves them out of the model's input.
func (c *converter) user(m *msg, t time.Time, ms int64) {
	var blocks [][]byte
	synthetic, run := false, 0
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		key := m.id
		if run > 0 {
			key = fmt.Sprintf("%s/%d", m.id, run)
		}
		run++
		if synthetic {
			c.tip = c.b.CustomMessage(key, c.tip, t, "opencode-synthetic", migrate.Array(blocks), false, nil)
		} else {
			c.tip = c.b.Message(key, c.tip, t, migrate.UserMessage(migrate.Array(blocks), ms))
		}
		blocks = nil
	}
	for _, p := range m.parts {
		var blk []byte
		switch p.Type {
		case "text":
			if !p.Ignored {
				blk = migrate.TextBlock(p.Text)
			}
		case "file":
			blk = fileBlock(p.URL, p.Filename)
		}
		if blk == nil {
			continue
		}
		if p.Synthetic != synthetic {
			flush()
			synthetic = p.Synthetic
		}
		blocks = append(blocks, blk)
	}
	// Nothing at all: a compaction request, or only ignored text.
	flush()
}

// step is the parts of one model call of an assistant message.
type step struct {
	parts  []part
	finish *part
}

// split cuts an assistant message's parts at its step-start parts.
func split(parts []part) []step {
	var steps []step
	cur := -1
	for i := range parts {
		p := &parts[i]
		if p.Type == "step-start" || cur < 0 {
			steps = append(steps, step{})
			cur = len(steps) - 1
			if p.Type == "step-start" {
				continue
			}
		}
		if p.Type == "step-finish" {
			steps[cur].finish = p
			continue
		}
		steps[cur].parts = append(steps[cur].parts, *p)
	}
	if len(steps) == 0 {
		steps = append(steps, step{})
	}
	return steps
}

// dataURL splits a base64 data URL.
func dataURL(u string) (data, mime string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return "", "", false
	}
	return data, strings.TrimSuffix(meta, ";base64"), true
}
