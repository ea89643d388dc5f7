package windsurf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Windsurf importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "windsurf".
func (Source) Name() string { return "windsurf" }

// Title returns "Windsurf".
func (Source) Title() string { return "Windsurf" }

// Locations returns WINDSURF_SESSIONS_DIR when set, else the Cascade
// directory of the editor's global storage for the operating system.
func (Source) Locations(l migrate.Locator) []string {
	if d := l.Env("WINDSURF_SESSIONS_DIR"); d != "" {
		return []string{d}
	}
	tail := filepath.Join("Windsurf", "User", "globalStorage", "codeium.windsurf", "cascade")
	switch l.GOOS {
	case "windows":
		appData := l.Env("APPDATA")
		if appData == "" {
			appData = filepath.Join(l.Home, "AppData", "Roaming")
		}
		return []string{filepath.Join(appData, tail)}
	case "darwin":
		return []string{filepath.Join(l.Home, "Library", "Application Support", tail)}
	}
	return []string{filepath.Join(l.Home, ".config", tail)}
}

// Detect reports whether path is a conversation file or a directory
// holding some.
func (Source) Detect(path string) bool {
	files, err := conversations(nil, path)
	return err == nil && len(files) > 0
}

// Open lists the conversations at path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	files, err := conversations(opts.FS, path)
	if err != nil {
		return nil, err
	}
	return &store{files: files, opts: opts}, nil
}

// conversations returns the .json files at path that look like
// conversations (an object with a messages array).
func conversations(fsys vfs.FS, path string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	var cands []string
	if st.IsDir() {
		cands = srcfs.Glob(fsys, filepath.Join(abs, "*.json"))
	} else {
		cands = []string{abs}
	}
	var out []string
	for _, f := range cands {
		if looksLikeConversation(fsys, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

func looksLikeConversation(fsys vfs.FS, path string) bool {
	data, err := srcfs.ReadFile(fsys, path)
	if err != nil {
		return false
	}
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(data, &probe) != nil {
		// A damaged conversation is still listed so that it is reported.
		return bytes.Contains(data, []byte(`"messages"`))
	}
	return jsonl.KindOf(bytes.TrimSpace(probe.Messages)) == jsonl.KindArray
}

type store struct {
	files []string
	opts  migrate.ImportOptions
}

func (s *store) Close() error { return nil }

func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, f := range s.files {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			if !yield(migrate.Ref{ID: strings.TrimSuffix(filepath.Base(f), ".json"), Path: f, Key: f}, nil) {
				return
			}
		}
	}
}

type conversation struct {
	ConversationID string            `json:"conversationId"`
	Title          string            `json:"title"`
	Workspace      string            `json:"workspace"`
	Cwd            string            `json:"cwd"`
	CreatedAt      json.RawMessage   `json:"createdAt"`
	Timestamp      json.RawMessage   `json:"timestamp"`
	StartTime      json.RawMessage   `json:"startTime"`
	UpdatedAt      json.RawMessage   `json:"updatedAt"`
	LastUpdated    json.RawMessage   `json:"lastUpdated"`
	LastModified   json.RawMessage   `json:"lastModified"`
	Messages       []json.RawMessage `json:"messages"`
}

type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Model     string          `json:"model"`
	Timestamp json.RawMessage `json:"timestamp"`
	CreatedAt json.RawMessage `json:"createdAt"`
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	data, err := srcfs.ReadFileTracked(s.opts.FS, ref.Key, s.opts.Progress)
	if err != nil {
		return nil, err
	}
	var doc conversation
	if err := json.Unmarshal(data, &doc); err != nil {
		line := 0
		if se, ok := err.(*json.SyntaxError); ok && se.Offset <= int64(len(data)) {
			line = 1 + bytes.Count(data[:se.Offset], []byte{'\n'})
		}
		return nil, &migrate.Damage{Path: ref.Key, Line: line, Err: err}
	}
	conv := &migrate.Conversion{}
	sourceID := doc.ConversationID
	if sourceID == "" {
		sourceID = ref.ID
	}
	m := migrate.Meta{SourcePath: ref.Key}
	m.Start, m.DateFromFile = start(s.opts.FS, ref.Key, &doc)
	switch {
	case doc.Cwd != "":
		m.Cwd, m.CwdKnown = doc.Cwd, true
	case doc.Workspace != "":
		m.Cwd, m.CwdKnown = doc.Workspace, true
	default:
		m.Cwd = s.opts.Cwd
	}
	b := migrate.NewBuilder("windsurf", sourceID)
	var tip *migrate.Node
	clock := m.Start
	for i, raw := range doc.Messages {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var msg message
		if err := migrate.DecodeJSON(raw, &msg); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Pos: fmt.Sprintf("message %d", i+1), Err: err})
			continue
		}
		if t, ok := firstTime(msg.Timestamp, msg.CreatedAt); ok {
			clock = t
		}
		key := fmt.Sprintf("m%d", i)
		text, blocks := content(msg.Content)
		ms := migrate.Millis(clock)
		switch msg.Role {
		case "user":
			tip = b.Message(key, tip, clock, migrate.UserMessage(blocks, ms))
		case "assistant":
			var parts [][]byte
			_ = jsonl.Elements(blocks, func(v []byte) bool {
				parts = append(parts, append([]byte(nil), v...))
				return true
			})
			model := msg.Model
			if model == "" {
				model = migrate.UnknownModel
			}
			a := migrate.Assistant{API: "windsurf", Provider: "windsurf", Model: model, Content: parts, Timestamp: ms}
			tip = b.Message(key, tip, clock, a.JSON())
		default:
			role := msg.Role
			if role == "" {
				role = "unknown"
			}
			tip = b.CustomMessage(key, tip, clock, "windsurf-"+role, jsonl.AppendString(nil, text), true, nil)
		}
	}
	if b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Key, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if doc.Title != "" {
		b.SetName(doc.Title)
	}
	conv.Sessions = append(conv.Sessions, b.Finish(m))
	return conv, nil
}

// start returns the session's start: the first date the conversation
// holds (its createdAt, timestamp or startTime; else the earliest date of
// a message; else its updatedAt, lastUpdated or lastModified, when it was
// last changed), or, when it holds none, the file's modification time,
// reported as such.
func start(fsys vfs.FS, path string, doc *conversation) (time.Time, bool) {
	if t, ok := firstTime(doc.CreatedAt, doc.Timestamp, doc.StartTime); ok {
		return t, false
	}
	var earliest time.Time
	for _, raw := range doc.Messages {
		var msg message
		if json.Unmarshal(raw, &msg) != nil {
			continue
		}
		if t, ok := firstTime(msg.Timestamp, msg.CreatedAt); ok && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	if !earliest.IsZero() {
		return earliest, false
	}
	if t, ok := firstTime(doc.UpdatedAt, doc.LastUpdated, doc.LastModified); ok {
		return t, false
	}
	if st, err := srcfs.Stat(fsys, path); err == nil {
		return st.ModTime().UTC().Truncate(time.Millisecond), true
	}
	return time.UnixMilli(0).UTC(), true
}

func firstTime(vals ...json.RawMessage) (time.Time, bool) {
	for _, v := range vals {
		if t, ok := migrate.ParseTime(v); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// content returns a message's text and its pi content blocks.
func content(raw json.RawMessage) (string, []byte) {
	raw = bytes.TrimSpace(raw)
	if s, ok := jsonl.String(raw); ok {
		return s, migrate.TextContent(s)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var blocks [][]byte
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			blocks = append(blocks, migrate.TextBlock(p.Text))
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), migrate.Array(blocks)
}
