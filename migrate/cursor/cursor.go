package cursor

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
)

// Source is the Cursor importer.
type Source struct{}

var _ migrate.Source = Source{}

// Name returns "cursor".
func (Source) Name() string { return "cursor" }

// Title returns "Cursor".
func (Source) Title() string { return "Cursor" }

// Locations returns ~/.cursor.
func (Source) Locations(l migrate.Locator) []string {
	return []string{filepath.Join(l.Home, ".cursor")}
}

// Detect reports whether path is a store.db or a directory holding some
// (the Cursor home, its chats directory, a workspace or chat directory).
func (Source) Detect(path string) bool {
	dbs, err := stores(nil, path, true)
	return err == nil && len(dbs) > 0
}

// Open lists the chats under path.
func (Source) Open(_ context.Context, path string, opts migrate.ImportOptions) (migrate.Reader, error) {
	dbs, err := stores(opts.FS, path, false)
	if err != nil {
		return nil, err
	}
	return &store{dbs: dbs, opts: opts}, nil
}

// stores returns the store.db files at or below path (at most three
// directories down, as in chats/<hash>/<agent>/store.db).
func stores(fsys vfs.FS, path string, first bool) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := srcfs.Stat(fsys, abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !sqlitedb.IsSQLite(fsys, abs) {
			return nil, fmt.Errorf("%s is not a SQLite database", abs)
		}
		return []string{abs}, nil
	}
	root := abs
	if c := filepath.Join(abs, "chats"); srcfs.IsDir(fsys, c) {
		root = c
	}
	out, err := srcfs.Find(fsys, root, 3, first, func(d fs.DirEntry) bool { return d.Name() == "store.db" })
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

type store struct {
	dbs  []string
	opts migrate.ImportOptions
}

func (s *store) Close() error { return nil }

func (s *store) Sessions(ctx context.Context) iter.Seq2[migrate.Ref, error] {
	return func(yield func(migrate.Ref, error) bool) {
		for _, db := range s.dbs {
			if ctx.Err() != nil {
				yield(migrate.Ref{}, ctx.Err())
				return
			}
			if !yield(migrate.Ref{ID: filepath.Base(filepath.Dir(db)), Path: db, Key: db}, nil) {
				return
			}
		}
	}
}

// chatMeta is the JSON of meta row '0'.
type chatMeta struct {
	AgentID          string  `json:"agentId"`
	LatestRootBlobID string  `json:"latestRootBlobId"`
	Name             string  `json:"name"`
	CreatedAt        float64 `json:"createdAt"`
	LastUsedModel    string  `json:"lastUsedModel"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type part struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	Signature  string          `json:"signature"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"isError"`
	Image      string          `json:"image"`
	MimeType   string          `json:"mimeType"`
}

func (s *store) Convert(ctx context.Context, ref migrate.Ref) (*migrate.Conversion, error) {
	db, err := sqlitedb.Open(s.opts.FS, ref.Key, s.opts.TempDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conv := &migrate.Conversion{}
	var metaHex string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = '0'`).Scan(&metaHex); err != nil {
		return nil, fmt.Errorf("read meta of %s: %w", ref.Key, err)
	}
	var md chatMeta
	raw, herr := hex.DecodeString(strings.TrimSpace(metaHex))
	if herr != nil {
		raw = []byte(metaHex)
	}
	if err := migrate.DecodeJSON(raw, &md); err != nil {
		return nil, &migrate.Damage{Path: ref.Key, Pos: "meta row 0", Err: err}
	}

	ids, err := rootIDs(ctx, db.DB, md.LatestRootBlobID)
	var blobs [][]byte
	if err != nil {
		// Without the root, take every message blob in table order.
		conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Pos: "root blob " + md.LatestRootBlobID, Err: err})
		rows, qerr := db.QueryContext(ctx, `SELECT data FROM blobs ORDER BY rowid`)
		if qerr != nil {
			return nil, fmt.Errorf("read blobs of %s: %w", ref.Key, qerr)
		}
		for rows.Next() {
			var b []byte
			if rows.Scan(&b) == nil && json.Valid(b) {
				blobs = append(blobs, b)
			}
		}
		rows.Close()
	} else {
		for _, id := range ids {
			var b []byte
			if err := db.QueryRowContext(ctx, `SELECT data FROM blobs WHERE id = ?`, id).Scan(&b); err != nil {
				conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Pos: "blob " + id, Err: err})
				continue
			}
			blobs = append(blobs, b)
		}
	}

	sourceID := md.AgentID
	if sourceID == "" {
		sourceID = ref.ID
	}
	start := time.UnixMilli(int64(md.CreatedAt)).UTC()
	m := migrate.Meta{SourcePath: ref.Key, Start: start}
	model := md.LastUsedModel
	if model == "" {
		model = migrate.UnknownModel
	}
	c := &converter{b: migrate.NewBuilder("cursor", sourceID), clock: start, model: model, tools: map[string]string{}}
	for i, b := range blobs {
		var msg message
		if err := migrate.DecodeJSON(b, &msg); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: ref.Key, Pos: fmt.Sprintf("message %d", i+1), Err: err})
			continue
		}
		c.key = fmt.Sprintf("m%d", i)
		c.message(&msg, &m)
	}
	if c.b.Len() == 0 {
		conv.Skipped = append(conv.Skipped, &migrate.Skip{SourceID: sourceID, Path: ref.Key, Reason: migrate.SkipEmpty})
		return conv, nil
	}
	if m.Cwd == "" {
		m.Cwd = c.sysCwd
		m.CwdKnown = m.Cwd != ""
	}
	if m.Cwd == "" {
		m.Cwd = s.opts.Cwd
	}
	if md.Name != "" {
		c.b.SetName(md.Name)
	}
	conv.Sessions = append(conv.Sessions, c.b.Finish(m))
	return conv, nil
}

// rootIDs reads the root blob: protobuf whose field 1 (repeated bytes)
// holds the SHA-256 of each message blob, in order.
func rootIDs(ctx context.Context, db *sql.DB, rootID string) ([]string, error) {
	if rootID == "" {
		return nil, errors.New("no latestRootBlobId")
	}
	var b []byte
	if err := db.QueryRowContext(ctx, `SELECT data FROM blobs WHERE id = ?`, rootID).Scan(&b); err != nil {
		return nil, err
	}
	var ids []string
	for i := 0; i < len(b); {
		key, n := uvarint(b[i:])
		if n <= 0 {
			return nil, fmt.Errorf("bad protobuf key at byte %d", i)
		}
		i += n
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			_, n = uvarint(b[i:])
			if n <= 0 {
				return nil, fmt.Errorf("bad varint at byte %d", i)
			}
			i += n
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, n := uvarint(b[i:])
			if n <= 0 || uint64(len(b)-i-n) < l {
				return nil, fmt.Errorf("bad length at byte %d", i)
			}
			i += n
			if field == 1 && l == 32 {
				ids = append(ids, hex.EncodeToString(b[i:i+int(l)]))
			}
			i += int(l)
		default:
			return nil, fmt.Errorf("unsupported protobuf wire type %d at byte %d", wire, i)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("root blob lists no messages")
	}
	return ids, nil
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

type converter struct {
	b      *migrate.Builder
	tip    *migrate.Node
	clock  time.Time
	model  string
	key    string
	sysCwd string
	tools  map[string]string
}

var (
	infoRe      = regexp.MustCompile(`(?s)<user_info>(.*?)</user_info>`)
	queryRe     = regexp.MustCompile(`(?s)<user_query>(.*?)</user_query>`)
	workspaceRe = regexp.MustCompile(`(?m)^Workspace Path:\s*(.+?)\s*$`)
	workdirRe   = regexp.MustCompile(`(?m)^Working directory:\s*(.+?)\s*$`)
)

// parts decodes content: a string or a list of parts.
func parts(raw json.RawMessage) []part {
	if s, ok := jsonl.String(raw); ok {
		return []part{{Type: "text", Text: s}}
	}
	var ps []part
	_ = json.Unmarshal(raw, &ps)
	return ps
}

func (c *converter) message(msg *message, m *migrate.Meta) {
	ms := migrate.Millis(c.clock)
	switch msg.Role {
	case "system":
		for _, p := range parts(msg.Content) {
			if mm := workdirRe.FindStringSubmatch(p.Text); mm != nil && c.sysCwd == "" {
				c.sysCwd = mm[1]
			}
		}
	case "user":
		var blocks [][]byte
		for _, p := range parts(msg.Content) {
			switch p.Type {
			case "text":
				text := p.Text
				for _, info := range infoRe.FindAllStringSubmatch(text, -1) {
					inner := strings.Trim(info[1], "\n")
					if mm := workspaceRe.FindStringSubmatch(inner); mm != nil && m.Cwd == "" {
						m.Cwd, m.CwdKnown = mm[1], true
					}
					data := jsonl.NewObject(len(inner)+16).String("text", inner).Bytes()
					c.tip = c.b.Custom(c.key+"/info", c.tip, c.clock, "cursor-user-info", data)
				}
				text = infoRe.ReplaceAllString(text, "")
				text = queryRe.ReplaceAllStringFunc(text, func(q string) string {
					return strings.Trim(queryRe.FindStringSubmatch(q)[1], "\n")
				})
				if strings.TrimSpace(text) != "" {
					blocks = append(blocks, migrate.TextBlock(strings.TrimSpace(text)))
				}
			case "image":
				if p.Image != "" {
					blocks = append(blocks, migrate.ImageBlock(p.Image, p.MimeType))
				}
			}
		}
		if len(blocks) > 0 {
			c.tip = c.b.Message(c.key, c.tip, c.clock, migrate.UserMessage(migrate.Array(blocks), ms))
		}
	case "assistant":
		a := migrate.Assistant{API: "cursor", Provider: "cursor", Model: c.model, Timestamp: ms}
		for _, p := range parts(msg.Content) {
			switch p.Type {
			case "reasoning", "redacted-reasoning":
				a.Content = append(a.Content, migrate.ThinkingBlock(p.Text, p.Signature, p.Type == "redacted-reasoning"))
			case "text":
				a.Content = append(a.Content, migrate.TextBlock(p.Text))
			case "tool-call":
				c.tools[p.ToolCallID] = p.ToolName
				a.Content = append(a.Content, migrate.ToolCallBlock(p.ToolCallID, p.ToolName, migrate.ObjectArgs(p.Args)))
			}
		}
		c.tip = c.b.Message(c.key, c.tip, c.clock, a.JSON())
	case "tool":
		for _, p := range parts(msg.Content) {
			if p.Type != "tool-result" {
				continue
			}
			name := p.ToolName
			if name == "" {
				name = c.tools[p.ToolCallID]
			}
			content := migrate.TextContent(migrate.JSONText(p.Result))
			c.tip = c.b.Message(c.key, c.tip, c.clock, migrate.ToolResultMessage(p.ToolCallID, name, content, nil, p.IsError, ms))
		}
	}
}
