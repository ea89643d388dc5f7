package agsh

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the agsh importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "agsh".
func (Source) Name() string { return "agsh" }

// Title returns "agsh".
func (Source) Title() string { return "agsh" }

// Locations returns $XDG_DATA_HOME/agsh (default ~/.local/share/agsh)
// and, on macOS, ~/Library/Application Support/agsh.
func (Source) Locations(l migrate.Locator) []string {
	data := l.Env("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(l.Home, ".local", "share")
	}
	out := []string{filepath.Join(data, "agsh")}
	if l.GOOS == "darwin" {
		out = append(out, filepath.Join(l.Home, "Library", "Application Support", "agsh"))
	}
	return out
}

// dbPath returns the sessions.db at path (a directory holding it, or the
// file itself).
func dbPath(fsys vfs.FS, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		abs = filepath.Join(abs, "sessions.db")
	}
	if !sqlitedb.IsSQLite(fsys, abs) {
		return "", fmt.Errorf("%s is not an agsh sessions database", abs)
	}
	// Goose's database has the same name and tables of the same names;
	// its schema_version table tells it apart.
	if t, err := sqlitedb.Tables(fsys, abs); err == nil && t["schema_version"] {
		return "", fmt.Errorf("%s is not an agsh sessions database (it has a schema_version table: Goose's)", abs)
	}
	return abs, nil
}

// Detect reports whether path is an agsh sessions.db or a directory
// holding one.
func (Source) Detect(path string) bool {
	_, err := dbPath(nil, path)
	return err == nil
}

// Open opens the database read-only.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	p, err := dbPath(opts.FS, path)
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(opts.FS, p, opts.TempDir)
	if err != nil {
		return nil, err
	}
	return &store{db: db, path: p, opts: opts}, nil
}

type store struct {
	db   *sqlitedb.DB
	path string
	opts migrate.ImportOptions
}

func (s *store) Close() error { return s.db.Close() }

func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		rows, err := s.db.QueryContext(ctx, `SELECT id FROM sessions ORDER BY created_at, id`)
		if err != nil {
			yield(migrate.Ref{}, fmt.Errorf("list sessions of %s: %w", s.path, err))
			return
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err == nil {
				ids = append(ids, id)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			yield(migrate.Ref{}, fmt.Errorf("list sessions of %s: %w", s.path, err))
			return
		}
		for _, id := range ids {
			if !yield(migrate.Ref{ID: id, Path: s.path, Key: id}, nil) {
				return
			}
		}
	}
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature *string         `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// resultPart is one part of a tool_result's content (agsh 0.8 and
// later): {"type":"text","text"} or {"type":"image","source":{"type":
// "base64","media_type","data"}}.
type resultPart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// metadata is what the importer reads of sessions.metadata, which agsh
// 0.1 to 0.11 never write: a working directory and the model, should a
// build record them.
type metadata struct {
	Cwd      string `json:"cwd"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
}

// Convert reads the session's row, then its messages in order, each
// converted by the method of converter for its role.
func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	var created string
	var mdRaw sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT created_at, metadata FROM sessions WHERE id = ?`, ref.Key).Scan(&created, &mdRaw); err != nil {
		return nil, fmt.Errorf("read session %s of %s: %w", ref.Key, s.path, err)
	}
	m := migrate.Meta{SourcePath: s.path}
	m.Start, _ = migrate.ParseTimeString(created)
	var md metadata
	if mdRaw.Valid {
		_ = json.Unmarshal([]byte(mdRaw.String), &md)
	}
	provider, model := md.Provider, md.Model
	if provider == "" {
		provider = migrate.UnknownProvider
	}
	if model == "" {
		model = migrate.UnknownModel
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, role, content, created_at FROM messages WHERE session_id = ? ORDER BY id`, ref.Key)
	if err != nil {
		return nil, fmt.Errorf("read messages of session %s of %s: %w", ref.Key, s.path, err)
	}
	defer rows.Close()
	conv := &migrate.Conversion{}
	c := &converter{b: migrate.NewBuilder("agsh", ref.Key), tools: map[string]string{}, provider: provider, model: model}
	b := c.b
	clock := m.Start
	first := true
	for rows.Next() {
		var id int64
		var role, content, at string
		if err := rows.Scan(&id, &role, &content, &at); err != nil {
			return nil, fmt.Errorf("read messages of session %s of %s: %w", ref.Key, s.path, err)
		}
		if t, ok := migrate.ParseTimeString(at); ok {
			clock = t
		}
		if m.Start.IsZero() {
			m.Start = clock
		}
		key := "m" + strconv.FormatInt(id, 10)
		ms := migrate.Millis(clock)
		damaged := func(err error) {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: s.path, Pos: "message " + strconv.FormatInt(id, 10), Err: err})
		}
		isFirst := first
		first = false
		if err := migrate.CheckUTF8([]byte(content)); err != nil {
			damaged(err) // never imported with its bytes replaced
			continue
		}
		switch role {
		case "user":
			c.user(key, clock, ms, content, isFirst)
		case "assistant":
			c.assistant(key, clock, ms, content, damaged)
		case "tool_results":
			c.toolResults(key, clock, ms, content, damaged)
		default:
			damaged(fmt.Errorf("unknown role %q", role))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read messages of session %s of %s: %w", ref.Key, s.path, err)
	}
	if b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: ref.Key, Path: s.path, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	switch {
	case md.Cwd != "":
		m.Cwd, m.CwdKnown = md.Cwd, true
	case c.blockCwd != "":
		m.Cwd, m.CwdKnown = c.blockCwd, true
	default:
		m.Cwd = s.opts.Cwd
	}
	if m.Start.IsZero() {
		m.Start = time.UnixMilli(0).UTC()
	}
	conv.Sessions = append(conv.Sessions, b.Finish(m))
	return conv, nil
}

// converter converts the messages of one session, in order, into b.
type converter struct {
	b               *migrate.Builder
	tip             *migrate.Node
	tools           map[string]string // tool call id -> tool name
	open            []string          // tool calls of the last assistant message still unanswered
	blockCwd        string            // the working directory of the latest environment block
	provider, model string
}

// user converts a user message (key, at clock, ms its time in
// milliseconds); isFirst says it is the session's first message, which
// may be a compaction summary.
func (c *converter) user(key string, clock time.Time, ms int64, content string, isFirst bool) {
	b, tools := c.b, c.tools
	if isFirst {
		if summary, post, ok := compactionSummary(content); ok {
			if cwd := envCwd(post); cwd != "" {
				c.blockCwd = cwd
			}
			var details []byte
			if post != "" {
				details = jsonl.NewObject(len(post)+48).String("postCompactionContext", post).Bytes()
			}
			c.tip = b.Compaction(key, c.tip, clock, summary, 0, details)
			return
		}
	}
	if content == "" {
		// What agsh 0.8.1 and later save, at a compaction, for a
		// kept message holding only tool results (its text, which
		// is none): the results are lost, the calls get results
		// saying so, and nobody typed the empty message.
		for _, callID := range c.open {
			msg := migrate.ToolResultMessage(callID, tools[callID], migrate.TextContent(lostResult), nil, true, ms)
			c.tip = b.Message(key+"/"+callID, c.tip, clock, msg)
		}
		c.open = nil
		return
	}
	c.open = nil
	block, prompt := splitContext(content)
	if block != "" {
		if cwd := envCwd(block); cwd != "" {
			c.blockCwd = cwd
		}
		data := jsonl.NewObject(len(block)+16).String("text", block).Bytes()
		c.tip = b.Custom(key+"/context", c.tip, clock, "agsh-context", data)
	}
	c.tip = b.Message(key, c.tip, clock, migrate.UserMessage(migrate.TextContent(prompt), ms))
}

// assistant converts an assistant message; damaged gets why it cannot.
func (c *converter) assistant(key string, clock time.Time, ms int64, content string, damaged func(error)) {
	var bs []block
	if err := json.Unmarshal([]byte(content), &bs); err != nil {
		damaged(err)
		return
	}
	a := migrate.Assistant{API: "anthropic-messages", Provider: c.provider, Model: c.model, Timestamp: ms}
	c.open = nil
	for _, bl := range bs {
		switch bl.Type {
		case "text":
			a.Content = append(a.Content, migrate.TextBlock(bl.Text))
		case "thinking":
			a.Content = append(a.Content, migrate.ThinkingBlock(bl.Thinking, realSignature(bl.Signature), false))
		case "tool_use":
			c.tools[bl.ID] = bl.Name
			c.open = append(c.open, bl.ID)
			a.Content = append(a.Content, migrate.ToolCallBlock(bl.ID, bl.Name, migrate.ObjectArgs(bl.Input)))
		}
	}
	c.tip = c.b.Message(key, c.tip, clock, a.JSON())
}

// toolResults converts a message of tool results; damaged gets why it
// cannot.
func (c *converter) toolResults(key string, clock time.Time, ms int64, content string, damaged func(error)) {
	var bs []block
	if err := json.Unmarshal([]byte(content), &bs); err != nil {
		damaged(err)
		return
	}
	for _, bl := range bs {
		if bl.Type != "tool_result" {
			continue
		}
		name := c.tools[bl.ToolUseID]
		if name == "" {
			name = "unknown"
		}
		msg := migrate.ToolResultMessage(bl.ToolUseID, name, resultContent(bl.Content), nil, bl.IsError, ms)
		c.tip = c.b.Message(key, c.tip, clock, msg)
	}
	c.open = nil
}

// lostResult is the text of the tool results agsh did not keep at a
// compaction.
const lostResult = "(agsh kept no result for this call when it compacted the session)"

// Markers of the messages agsh writes itself.
const (
	summaryPrefix = "[Conversation summary from session compaction]\n\n"
	postMarker    = "\n\n[Post-compaction context]\n\n"
	envHeader     = "[Environment context]\n"
	todoHeader    = "[Current task list]\n"
)

// compactionSummary splits the first message of a compacted session
// ("[Conversation summary from session compaction]\n\n<summary>", then,
// from agsh 0.8.1, "\n\n[Post-compaction context]\n\n<environment,
// tasks, scratchpad>") into the summary and the post-compaction context.
func compactionSummary(content string) (summary, post string, ok bool) {
	rest, ok := strings.CutPrefix(content, summaryPrefix)
	if !ok {
		return "", "", false
	}
	if i := strings.LastIndex(rest, postMarker); i >= 0 {
		return rest[:i], rest[i+len(postMarker):], true
	}
	return rest, "", true
}

// splitContext splits a user message into the context block agsh put
// before the prompt and the prompt. The forms, by release:
//
//   - 0.10 and later: "<context>\n" + task list? + environment? +
//     "</context>\n\n" + prompt;
//   - 0.8 and 0.9: task list? + environment + "\n" + prompt;
//   - 0.4 to 0.7: environment + "\n" + prompt;
//
// where the environment is "[Environment context]\n", "Working directory:
// <dir>\n" (when agsh could read it) and "Date: <RFC 2822 date>\n", and
// the task list "[Current task list]\n", one "[ ] <id> - <description>"
// line per task ("[x]" done, "[~]" in progress) and a blank line. A
// message in none of these forms is all prompt.
func splitContext(content string) (block, prompt string) {
	if rest, ok := strings.CutPrefix(content, "<context>\n"); ok {
		if i := strings.Index(rest, "</context>\n\n"); i >= 0 {
			body := rest[:i]
			if strings.HasPrefix(body, envHeader) || strings.HasPrefix(body, todoHeader) {
				n := len("<context>\n") + i + len("</context>\n\n")
				return content[:n-2], content[n:]
			}
		}
		return "", content
	}
	rest := content
	if strings.HasPrefix(rest, todoHeader) {
		i := strings.Index(rest, "\n\n")
		if i < 0 {
			return "", content
		}
		for _, l := range strings.Split(rest[len(todoHeader):i], "\n") {
			if !todoLine(l) {
				return "", content
			}
		}
		rest = rest[i+2:]
	}
	env, ok := strings.CutPrefix(rest, envHeader)
	if !ok {
		return "", content
	}
	if wd, ok := strings.CutPrefix(env, "Working directory: "); ok {
		i := strings.IndexByte(wd, '\n')
		if i < 0 {
			return "", content
		}
		env = wd[i+1:]
	}
	date, ok := strings.CutPrefix(env, "Date: ")
	if !ok {
		return "", content
	}
	i := strings.Index(date, "\n\n")
	if i < 0 || strings.Contains(date[:i], "\n") {
		return "", content
	}
	n := len(content) - len(date) + i + 2
	return content[:n-1], content[n:]
}

// todoLine reports whether l is a line of agsh's task list.
func todoLine(l string) bool {
	return (strings.HasPrefix(l, "[ ] ") || strings.HasPrefix(l, "[x] ") || strings.HasPrefix(l, "[~] ")) &&
		strings.Contains(l, " - ")
}

// envCwd returns the working directory an environment block names, the
// last one when it names several.
func envCwd(block string) string {
	cwd := ""
	for _, l := range strings.Split(block, "\n") {
		if d, ok := strings.CutPrefix(l, "Working directory: "); ok && d != "" {
			cwd = d
		}
	}
	return cwd
}

// realSignature returns a thinking block's signature when it can be one
// Anthropic's API gave: base64 of at least 64 characters. agsh writes
// null when the stream carried none; an empty string or a short
// placeholder ("sig", "placeholder") is no signature, and replaying it
// would make the API refuse the conversation.
func realSignature(sig *string) string {
	if sig == nil || len(*sig) < 64 {
		return ""
	}
	for _, c := range *sig {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '+', c == '/', c == '=', c == '-', c == '_':
		default:
			return ""
		}
	}
	return *sig
}

// resultContent returns a tool_result's content as pi's toolResult
// content: a string (before agsh 0.8) as one text block; parts (0.8 and
// later), as agsh sends them to the model, one block each: text as text,
// image as image. A part of another type is kept as its JSON text.
func resultContent(raw json.RawMessage) []byte {
	var parts []resultPart
	if jsonl.KindOf(bytes.TrimSpace(raw)) != jsonl.KindArray || json.Unmarshal(raw, &parts) != nil {
		return migrate.TextContent(migrate.JSONText(raw))
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(raw, &raws)
	out := make([][]byte, 0, len(parts))
	for i, p := range parts {
		switch {
		case p.Type == "text":
			out = append(out, migrate.TextBlock(p.Text))
		case p.Type == "image" && p.Source != nil:
			out = append(out, migrate.ImageBlock(p.Source.Data, p.Source.MediaType))
		default:
			out = append(out, migrate.TextBlock(migrate.JSONText(raws[i])))
		}
	}
	if len(out) == 0 {
		out = append(out, migrate.TextBlock(""))
	}
	return migrate.Array(out)
}
