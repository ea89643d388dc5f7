package agsh

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
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
func dbPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		abs = filepath.Join(abs, "sessions.db")
	}
	if !sqlitedb.IsSQLite(abs) {
		return "", fmt.Errorf("%s is not an agsh sessions database", abs)
	}
	return abs, nil
}

// Detect reports whether path is an agsh sessions.db or a directory
// holding one.
func (Source) Detect(path string) bool {
	_, err := dbPath(path)
	return err == nil
}

// Open opens the database read-only.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Store, error) {
	p, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(p, opts.TempDir)
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
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	var created string
	var metadata sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT created_at, metadata FROM sessions WHERE id = ?`, ref.Key).Scan(&created, &metadata); err != nil {
		return nil, fmt.Errorf("read session %s of %s: %w", ref.Key, s.path, err)
	}
	m := migrate.Meta{SourcePath: s.path}
	m.Start, _ = migrate.ParseTimeString(created)
	if metadata.Valid {
		var md struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal([]byte(metadata.String), &md) == nil && md.Cwd != "" {
			m.Cwd, m.CwdKnown = md.Cwd, true
		}
	}
	if m.Cwd == "" {
		m.Cwd = s.opts.Cwd
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, role, content, created_at FROM messages WHERE session_id = ? ORDER BY id`, ref.Key)
	if err != nil {
		return nil, fmt.Errorf("read messages of session %s of %s: %w", ref.Key, s.path, err)
	}
	defer rows.Close()
	conv := &migrate.Conversion{}
	b := migrate.NewBuilder("agsh", ref.Key)
	var tip *migrate.Node
	tools := map[string]string{}
	clock := m.Start
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
		switch role {
		case "user":
			tip = b.Message(key, tip, clock, migrate.UserMessage(migrate.TextContent(content), ms))
		case "assistant":
			var bs []block
			if err := json.Unmarshal([]byte(content), &bs); err != nil {
				damaged(err)
				continue
			}
			a := migrate.Assistant{API: "anthropic-messages", Provider: "agsh", Timestamp: ms}
			for _, bl := range bs {
				switch bl.Type {
				case "text":
					a.Content = append(a.Content, migrate.TextBlock(bl.Text))
				case "thinking":
					a.Content = append(a.Content, migrate.ThinkingBlock(bl.Thinking, bl.Signature, false))
				case "tool_use":
					tools[bl.ID] = bl.Name
					a.Content = append(a.Content, migrate.ToolCallBlock(bl.ID, bl.Name, migrate.ObjectArgs(bl.Input)))
				}
			}
			tip = b.Message(key, tip, clock, a.JSON())
		case "tool_results":
			var bs []block
			if err := json.Unmarshal([]byte(content), &bs); err != nil {
				damaged(err)
				continue
			}
			for _, bl := range bs {
				if bl.Type != "tool_result" {
					continue
				}
				name := tools[bl.ToolUseID]
				if name == "" {
					name = "unknown"
				}
				msg := migrate.ToolResultMessage(bl.ToolUseID, name, migrate.TextContent(migrate.JSONText(bl.Content)), nil, bl.IsError, ms)
				tip = b.Message(key, tip, clock, msg)
			}
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
	if m.Start.IsZero() {
		m.Start = time.UnixMilli(0).UTC()
	}
	conv.Sessions = append(conv.Sessions, b.Finish(m))
	return conv, nil
}
