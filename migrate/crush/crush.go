package crush

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
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

// SchemaVersion is the newest migration of Crush's database this importer
// reads (goose_db_version's highest version_id, Crush v0.90.0); a
// database migrated further is refused with an error naming its version.
const SchemaVersion = 20260127000000

// Source is the Crush importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "crush".
func (Source) Name() string { return "crush" }

// Title returns "Crush".
func (Source) Title() string { return "Crush" }

// Locations returns Crush's global data directory, which holds
// projects.json, the list of the projects Crush ran in and their data
// directories (each with its crush.db): $CRUSH_GLOBAL_DATA, else
// $XDG_DATA_HOME/crush, else %LOCALAPPDATA%\crush on Windows and
// ~/.local/share/crush elsewhere.
func (Source) Locations(l migrate.Locator) []string {
	if d := l.Env("CRUSH_GLOBAL_DATA"); d != "" {
		return []string{d}
	}
	if d := l.Env("XDG_DATA_HOME"); d != "" {
		return []string{filepath.Join(d, "crush")}
	}
	if l.GOOS == "windows" {
		d := l.Env("LOCALAPPDATA")
		if d == "" {
			d = filepath.Join(l.Home, "AppData", "Local")
		}
		return []string{filepath.Join(d, "crush")}
	}
	return []string{filepath.Join(l.Home, ".local", "share", "crush")}
}

// database is one crush.db and the project it belongs to.
type database struct {
	path string
	cwd  string // the project directory, "" when unknown
}

// isCrushDB reports whether path is a Crush database: one with the
// sessions and messages tables and the migration table Crush's migrator
// (pressly/goose) keeps.
func isCrushDB(fsys vfs.FS, path string) bool {
	t, err := sqlitedb.Tables(fsys, path)
	return err == nil && t["sessions"] && t["messages"] && t["goose_db_version"]
}

// databases returns the Crush databases at path: a crush.db; a data
// directory holding one (.crush, whose parent is the project); a project
// directory holding .crush/crush.db; or the global data directory, whose
// projects.json lists the projects and their data directories.
func databases(fsys vfs.FS, path string) ([]database, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	one := func(db string) database {
		d := database{path: db}
		if dir := filepath.Dir(db); filepath.Base(dir) == ".crush" {
			d.cwd = filepath.Dir(dir)
		}
		return d
	}
	if !st.IsDir() {
		if !isCrushDB(fsys, abs) {
			return nil, fmt.Errorf("%s is not a Crush database", abs)
		}
		return []database{one(abs)}, nil
	}
	for _, db := range []string{filepath.Join(abs, "crush.db"), filepath.Join(abs, ".crush", "crush.db")} {
		if srcfs.IsFile(fsys, db) && isCrushDB(fsys, db) {
			return []database{one(db)}, nil
		}
	}
	list := filepath.Join(abs, "projects.json")
	data, err := srcfs.ReadFile(fsys, list)
	if err != nil {
		return nil, fmt.Errorf("%s holds no Crush database and no projects.json", abs)
	}
	var pl struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	if err := migrate.DecodeJSON(data, &pl); err != nil {
		return nil, fmt.Errorf("read %s: %w", list, err)
	}
	var out []database
	seen := map[string]bool{}
	for _, p := range pl.Projects {
		dir := p.DataDir
		if dir == "" {
			dir = filepath.Join(p.Path, ".crush")
		}
		db := filepath.Join(dir, "crush.db")
		if seen[db] || !srcfs.IsFile(fsys, db) || !isCrushDB(fsys, db) {
			continue
		}
		seen[db] = true
		out = append(out, database{path: db, cwd: p.Path})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("none of the projects %s lists has a Crush database", list)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// Detect reports whether path is a Crush database, a data or project
// directory holding one, or the global data directory listing projects
// that have one.
func (Source) Detect(path string) bool {
	dbs, err := databases(nil, path)
	return err == nil && len(dbs) > 0
}

// Open finds the databases at path; each is opened when its sessions are
// listed.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	dbs, err := databases(opts.FS, path)
	if err != nil {
		return nil, err
	}
	return &store{dbs: dbs, opts: opts, sessions: map[string]*session{}}, nil
}

type store struct {
	dbs      []database
	opts     migrate.ImportOptions
	open     []*sqlitedb.DB
	sessions map[string]*session
}

// session is a sessions row and where it lives.
type session struct {
	id, parent, title string
	created           time.Time
	prompt, complete  float64
	cost              float64
	db                *sqlitedb.DB
	cwd               string
}

func (s *store) Close() error {
	var first error
	for _, db := range s.open {
		if err := db.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Sessions lists the sessions of every database, parents before their
// subagent sessions. A database that cannot be read, or whose schema is
// newer than SchemaVersion, is reported and the others are listed.
func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, d := range s.dbs {
			list, err := s.dbSessions(ctx, d)
			if err != nil {
				if !yield(migrate.Ref{}, err) {
					return
				}
				continue
			}
			for _, ss := range sqlitedb.ParentsFirst(list, sessionID, sessionParent, sessionCreated) {
				if ctx.Err() != nil {
					yield(migrate.Ref{}, ctx.Err())
					return
				}
				key := d.path + "\x00" + ss.id
				s.sessions[key] = ss
				if !yield(migrate.Ref{ID: ss.id, Path: d.path, Key: key}, nil) {
					return
				}
			}
		}
	}
}

func (s *store) dbSessions(ctx context.Context, d database) ([]*session, error) {
	db, err := sqlitedb.Open(s.opts.FS, d.path, s.opts.TempDir)
	if err != nil {
		return nil, err
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("read the schema version of %s: %w", d.path, err)
	}
	if v.Int64 > SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("%s has Crush schema version %d (its newest migration); this importer reads versions up to %d", d.path, v.Int64, int64(SchemaVersion))
	}
	s.open = append(s.open, db)
	rows, err := db.QueryContext(ctx, `SELECT * FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", d.path, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", d.path, err)
	}
	var out []*session
	for rows.Next() {
		r, err := sqlitedb.ScanRow(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("list sessions of %s: %w", d.path, err)
		}
		ss := &session{id: asString(r["id"]), parent: asString(r["parent_session_id"]), title: asString(r["title"]),
			created: epoch(asFloat(r["created_at"])), prompt: asFloat(r["prompt_tokens"]), complete: asFloat(r["completion_tokens"]),
			cost: asFloat(r["cost"]), db: db, cwd: d.cwd}
		if ss.id != "" {
			out = append(out, ss)
		}
	}
	return out, rows.Err()
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
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

// epoch reads a Crush time: Unix seconds (every writer uses
// strftime('%s')), milliseconds when above 1e10.
func epoch(f float64) time.Time {
	if f > 1e10 {
		return time.UnixMilli(int64(f)).UTC()
	}
	return time.Unix(int64(f), 0).UTC()
}

// message is a messages row.
type message struct {
	id, role, model, provider string
	created                   time.Time
	summary                   bool
	parts                     []part
}

// part is one element of messages.parts: {"type","data"}.
type part struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// partData is the data of every part type this importer reads.
type partData struct {
	Thinking   string `json:"thinking"`
	Signature  string `json:"signature"`
	Text       string `json:"text"`
	URL        string `json:"url"`
	Path       string `json:"Path"`
	MIMEType   string `json:"MIMEType"`
	BinData    string `json:"Data"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Input      string `json:"input"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	Data       string `json:"data"`
	MimeType   string `json:"mime_type"`
	Metadata   string `json:"metadata"`
	IsError    bool   `json:"is_error"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Details    string `json:"details"`
	Command    string `json:"command"`
	Output     string `json:"output"`
	ExitCode   int    `json:"exit_code"`
}

// knownParts are the part types of Crush v0.90.0 (message/content.go).
var knownParts = map[string]bool{
	"reasoning": true, "text": true, "image_url": true, "binary": true,
	"tool_call": true, "tool_result": true, "finish": true, "shell_command": true,
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	ss := s.sessions[ref.Key]
	if ss == nil {
		return nil, fmt.Errorf("crush: unknown session %q", ref.Key)
	}
	conv := &migrate.Conversion{}
	msgs, err := s.messages(ctx, ss, ref.Path, conv)
	if err != nil {
		return nil, err
	}
	m := migrate.Meta{SourcePath: ref.Path, ParentSourceID: ss.parent, Start: ss.created}
	if ss.cwd != "" {
		m.Cwd, m.CwdKnown = ss.cwd, true
	} else {
		m.Cwd = s.opts.Cwd
	}
	c := &converter{b: migrate.NewBuilder("crush", ss.id), ss: ss}
	c.run(msgs)
	if c.b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: ss.id, Path: ref.Path, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if ss.title != "" {
		c.b.SetName(ss.title)
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

// messages reads a session's messages in Crush's order (created_at; rows
// of the same second in insertion order). A row whose parts are not JSON
// is damage; a part of a type this importer does not know is reported as
// damage too, and kept (see converter.custom).
func (s *store) messages(ctx context.Context, ss *session, path string, conv *migrate.Conversion) ([]*message, error) {
	rows, err := ss.db.QueryContext(ctx, `SELECT rowid AS crush_rowid, * FROM messages WHERE session_id = ? ORDER BY created_at, rowid`, ss.id)
	if err != nil {
		return nil, fmt.Errorf("read messages of %s in %s: %w", ss.id, path, err)
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
			return nil, fmt.Errorf("read messages of %s in %s: %w", ss.id, path, err)
		}
		msg := &message{id: asString(r["id"]), role: asString(r["role"]), model: asString(r["model"]), provider: asString(r["provider"]),
			created: epoch(asFloat(r["created_at"])), summary: asFloat(r["is_summary_message"]) != 0}
		if msg.id == "" {
			msg.id = "row" + asString(r["crush_rowid"])
		}
		pos := "message " + msg.id
		if err := migrate.DecodeJSON([]byte(asString(r["parts"])), &msg.parts); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: path, Pos: pos, Err: fmt.Errorf("parts: %w", err)})
			continue
		}
		for i, p := range msg.parts {
			if !knownParts[p.Type] {
				conv.Damage = append(conv.Damage, &migrate.Damage{Path: path, Pos: pos + " part " + strconv.Itoa(i),
					Err: fmt.Errorf("part type %q is not one of Crush v0.90's; kept as a crush-part entry", p.Type)})
			}
		}
		out = append(out, msg)
	}
	return out, rows.Err()
}

// converter turns one session's messages into a chain of entries.
type converter struct {
	b       *migrate.Builder
	tip     *migrate.Node
	ss      *session
	pending []call
	last    time.Time
}

type call struct{ id, name string }

func (c *converter) run(msgs []*message) {
	usageAt := -1 // the last reply: it gets the session's usage
	for i, m := range msgs {
		if m.role == "assistant" && !m.summary {
			usageAt = i
		}
	}
	for i, m := range msgs {
		c.last = m.created
		switch {
		case m.summary:
			c.flush()
			c.summary(m)
		case m.role == "assistant":
			c.flush()
			c.assistant(m, i == usageAt)
		case m.role == "tool":
			c.results(m)
		case m.role == "user":
			c.user(m)
		default:
			c.custom(m, m.parts)
		}
	}
	c.flush()
}

// custom keeps parts that have no place in pi's messages (a system
// message, a part type this importer does not know) as a custom entry
// "crush-part" {"role","parts"} out of the context.
func (c *converter) custom(m *message, parts []part) {
	items := make([][]byte, 0, len(parts))
	for _, p := range parts {
		b := jsonl.NewObject(len(p.Data)+32).String("type", p.Type)
		if d, err := jsonl.Canonical(nil, p.Data); err == nil && len(d) > 0 {
			b.Raw("data", d)
		}
		items = append(items, b.Bytes())
	}
	data := jsonl.NewObject(256).String("role", m.role).Raw("parts", migrate.Array(items)).Bytes()
	c.tip = c.b.Custom(m.id+"/custom", c.tip, m.created, "crush-part", data)
}

// flush answers the tool calls that got no result with an error result
// saying so.
func (c *converter) flush() {
	for _, p := range c.pending {
		msg := migrate.ToolResultMessage(p.id, p.name, migrate.TextContent("(no result recorded)"), nil, true, migrate.Millis(c.last))
		c.tip = c.b.Message("noresult/"+p.id, c.tip, c.last, msg)
	}
	c.pending = nil
}

func textOf(parts []part) string {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			var d partData
			if json.Unmarshal(p.Data, &d) == nil {
				texts = append(texts, d.Text)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// summary makes a summary message a compaction entry: Crush builds the
// next prompts from the summary on.
func (c *converter) summary(m *message) {
	c.tip = c.b.Compaction(m.id, c.tip, m.created, textOf(m.parts), 0, nil)
}

// api names pi's API for a Crush provider.
func api(provider string) string {
	switch {
	case strings.Contains(provider, "anthropic"):
		return "anthropic-messages"
	case provider == "openai":
		return "openai-responses"
	case strings.Contains(provider, "gemini"), strings.Contains(provider, "google"):
		return "google-generative-ai"
	}
	return "openai-completions"
}

func (c *converter) assistant(m *message, usage bool) {
	provider, model := m.provider, m.model
	if provider == "" {
		provider = migrate.UnknownProvider
	}
	if model == "" {
		model = migrate.UnknownModel
	}
	a := migrate.Assistant{API: api(provider), Provider: provider, Model: model, Timestamp: migrate.Millis(m.created)}
	var calls []call
	var other []part
	var finish *partData
	for _, p := range m.parts {
		var d partData
		if err := json.Unmarshal(p.Data, &d); err != nil || !knownParts[p.Type] {
			other = append(other, p)
			continue
		}
		switch p.Type {
		case "reasoning":
			if d.Thinking != "" {
				a.Content = append(a.Content, migrate.ThinkingBlock(d.Thinking, d.Signature, false))
			}
		case "text":
			a.Content = append(a.Content, migrate.TextBlock(d.Text))
		case "tool_call":
			a.Content = append(a.Content, migrate.ToolCallBlock(d.ID, d.Name, migrate.ObjectArgs(jsonl.AppendString(nil, d.Input))))
			calls = append(calls, call{d.ID, d.Name})
		case "finish":
			finish = &d
		default:
			other = append(other, p)
		}
	}
	if finish != nil {
		switch finish.Reason {
		case "end_turn":
			if len(calls) == 0 {
				a.StopReason = "stop"
			}
		case "max_tokens":
			a.StopReason = "length"
		case "canceled":
			a.StopReason = "aborted"
		case "error":
			a.StopReason = "error"
			a.ErrorMessage = strings.TrimSpace(finish.Message + "\n" + finish.Details)
			if a.ErrorMessage == "" {
				a.ErrorMessage = "error"
			}
		}
	}
	if len(a.Content) == 0 && a.StopReason != "error" && a.StopReason != "aborted" {
		if len(other) > 0 {
			c.custom(m, other)
		}
		return
	}
	if usage {
		// Crush keeps usage per session: the last call's prompt and
		// completion tokens, and the cost of all its calls.
		a.Usage = pimessage.Usage{Input: migrate.Tokens(c.ss.prompt), Output: migrate.Tokens(c.ss.complete), Cost: pimessage.Cost{Total: c.ss.cost}}
	}
	c.tip = c.b.Message(m.id, c.tip, m.created, a.JSON())
	c.pending = calls
	if len(other) > 0 {
		c.custom(m, other)
	}
}

// results converts a tool message: one toolResult per tool_result part
// that answers a pending call.
func (c *converter) results(m *message) {
	var other []part
	for i, p := range m.parts {
		var d partData
		if p.Type != "tool_result" || json.Unmarshal(p.Data, &d) != nil {
			other = append(other, p)
			continue
		}
		at := -1
		for j, pc := range c.pending {
			if pc.id == d.ToolCallID {
				at = j
			}
		}
		if at < 0 {
			other = append(other, p)
			continue
		}
		pc := c.pending[at]
		c.pending = append(c.pending[:at:at], c.pending[at+1:]...)
		blocks := [][]byte{migrate.TextBlock(d.Content)}
		if d.Data != "" && strings.HasPrefix(d.MimeType, "image/") {
			blocks = append(blocks, migrate.ImageBlock(d.Data, d.MimeType))
		}
		var details []byte
		if md := strings.TrimSpace(d.Metadata); md != "" && json.Valid([]byte(md)) {
			details, _ = jsonl.Canonical(nil, []byte(md))
		}
		name := d.Name
		if name == "" {
			name = pc.name
		}
		msg := migrate.ToolResultMessage(pc.id, name, migrate.Array(blocks), details, d.IsError, migrate.Millis(m.created))
		key := m.id
		if i > 0 {
			key = m.id + "/" + strconv.Itoa(i)
		}
		c.tip = c.b.Message(key, c.tip, m.created, msg)
	}
	if len(other) > 0 {
		c.custom(m, other)
	}
}

// user converts a user message: text, images (data URLs and binary
// attachments; text files inline, other files named) as a user message;
// a bang-mode shell command as a custom_message "crush-shell" (displayed)
// with the text Crush gives the model ("$ <command>\n<output>\n(exit code
// N)") and details {command, output, exit_code}.
func (c *converter) user(m *message) {
	var blocks [][]byte
	var other []part
	for i, p := range m.parts {
		var d partData
		if err := json.Unmarshal(p.Data, &d); err != nil || !knownParts[p.Type] {
			other = append(other, p)
			continue
		}
		switch p.Type {
		case "text":
			blocks = append(blocks, migrate.TextBlock(d.Text))
		case "image_url":
			if data, mime, ok := dataURL(d.URL); ok {
				blocks = append(blocks, migrate.ImageBlock(data, mime))
			} else {
				blocks = append(blocks, migrate.TextBlock("[image: "+d.URL+"]"))
			}
		case "binary":
			switch {
			case strings.HasPrefix(d.MIMEType, "image/"):
				blocks = append(blocks, migrate.ImageBlock(d.BinData, d.MIMEType))
			case strings.HasPrefix(d.MIMEType, "text/"):
				text, err := base64.StdEncoding.DecodeString(d.BinData)
				if err != nil {
					text = []byte("(unreadable)")
				}
				blocks = append(blocks, migrate.TextBlock("[file: "+d.Path+"]\n"+string(text)))
			default:
				blocks = append(blocks, migrate.TextBlock("[file: "+d.Path+"]"))
			}
		case "shell_command":
			c.flush()
			text := fmt.Sprintf("$ %s\n%s\n(exit code %d)", d.Command, d.Output, d.ExitCode)
			details := jsonl.NewObject(len(d.Command)+len(d.Output)+64).String("command", d.Command).
				String("output", d.Output).Number("exit_code", float64(d.ExitCode)).Bytes()
			c.tip = c.b.CustomMessage(m.id+"/shell"+strconv.Itoa(i), c.tip, m.created, "crush-shell", jsonl.AppendString(nil, text), true, details)
		default:
			other = append(other, p)
		}
	}
	if len(blocks) > 0 {
		c.flush()
		c.tip = c.b.Message(m.id, c.tip, m.created, migrate.UserMessage(migrate.Array(blocks), migrate.Millis(m.created)))
	}
	if len(other) > 0 {
		c.custom(m, other)
	}
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

func sessionID(s *session) string         { return s.id }
func sessionParent(s *session) string     { return s.parent }
func sessionCreated(s *session) time.Time { return s.created }
