package crush

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// schema is the net effect of Crush v0.90.0's migrations (internal/db/
// migrations, 20250424200609 to 20260127000000) on the tables the
// importer reads, with the triggers that keep message_count, and the
// table pressly/goose records the applied migrations in.
var schema = []string{
	`PRAGMA journal_mode=WAL`,
	`PRAGMA foreign_keys=ON`,
	`CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))`,
	`CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		parent_session_id TEXT,
		title TEXT NOT NULL,
		message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
		prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
		completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
		cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
		updated_at INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		summary_message_id TEXT,
		todos TEXT)`,
	`CREATE TABLE messages (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL,
		role TEXT NOT NULL,
		parts TEXT NOT NULL default '[]',
		model TEXT,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		finished_at INTEGER,
		provider TEXT,
		is_summary_message INTEGER DEFAULT 0 NOT NULL,
		FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE)`,
	`CREATE INDEX idx_messages_session_id ON messages (session_id)`,
	`CREATE INDEX idx_messages_created_at ON messages (created_at)`,
	`CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages BEGIN
		UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END`,
	`CREATE TRIGGER update_session_message_count_on_delete AFTER DELETE ON messages BEGIN
		UPDATE sessions SET message_count = message_count - 1 WHERE id = old.session_id; END`,
}

var migrations = []int64{0, 20250424200609, 20250515105448, 20250624000000, 20250627000000, 20250810000000, 20250812000000, 20260127000000}

var t0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC).Unix()

type row struct {
	id, session, role, parts, model, provider string
	at                                        int64
	summary                                   int
}

func p(typ, data string) string { return `{"type":"` + typ + `","data":` + data + `}` }

func parts(ps ...string) string { return "[" + strings.Join(ps, ",") + "]" }

const subID = "msg_a2$$call_agent"

var notes = base64.StdEncoding.EncodeToString([]byte("remember the tests\n"))

// The fixture: ses_a has a tool loop with a subagent (the agent tool),
// a bang-mode shell command, a summary, a call left without a result, a
// canceled reply and a part of a type Crush does not write; ses_sub is
// the subagent's session.
var rows = []row{
	{"msg_a1", "ses_a", "user", parts(p("text", `{"text":"list files"}`),
		p("binary", `{"Path":"/w/app/notes.txt","MIMEType":"text/plain","Data":"`+notes+`"}`),
		p("image_url", `{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}`)), "", "", t0 + 1, 0},
	{"msg_a2", "ses_a", "assistant", parts(
		p("reasoning", `{"thinking":"run ls","signature":"sig1","thought_signature":"","tool_id":"","responses_data":null,"started_at":1,"finished_at":2}`),
		p("text", `{"text":"Listing."}`),
		p("tool_call", `{"id":"call_ls","name":"bash","input":"{\"command\":\"ls\"}","provider_executed":false,"finished":true}`),
		p("tool_call", `{"id":"call_agent","name":"agent","input":"{\"prompt\":\"explore the repo\"}","provider_executed":false,"finished":true}`),
		p("finish", `{"reason":"tool_use","time":`+strconv.FormatInt(t0+2, 10)+`}`)), "claude-sonnet-4-5", "anthropic", t0 + 2, 0},
	{"msg_a3", "ses_a", "tool", parts(p("tool_result", `{"tool_call_id":"call_ls","name":"bash","content":"a.go\n","data":"","mime_type":"","metadata":"{\"exit_code\":0}","is_error":false}`)), "", "", t0 + 3, 0},
	{"msg_a4", "ses_a", "tool", parts(p("tool_result", `{"tool_call_id":"call_agent","name":"agent","content":"It holds a.go.","data":"","mime_type":"","metadata":"","is_error":false}`)), "", "", t0 + 3, 0},
	{"msg_a5", "ses_a", "assistant", parts(p("text", `{"text":"One file."}`), p("finish", `{"reason":"end_turn","time":1}`)), "claude-sonnet-4-5", "anthropic", t0 + 4, 0},
	{"msg_a6", "ses_a", "user", parts(p("shell_command", `{"command":"git status","output":"clean\n","exit_code":0}`)), "", "", t0 + 5, 0},
	{"msg_a7", "ses_a", "assistant", parts(p("text", `{"text":"## Summary\nListed the files."}`), p("finish", `{"reason":"end_turn","time":1}`)), "claude-sonnet-4-5", "anthropic", t0 + 6, 1},
	{"msg_a8", "ses_a", "user", parts(p("text", `{"text":"view a.go"}`)), "", "", t0 + 7, 0},
	{"msg_a9", "ses_a", "assistant", parts(p("tool_call", `{"id":"call_view","name":"view","input":"{\"file_path\":\"a.go\"}","provider_executed":false,"finished":false}`), p("finish", `{"reason":"canceled","time":1}`)), "claude-sonnet-4-5", "anthropic", t0 + 8, 0},
	{"msg_a10", "ses_a", "user", parts(p("text", `{"text":"again"}`)), "", "", t0 + 9, 0},
	{"msg_a11", "ses_a", "assistant", parts(p("citation", `{"url":"https://example.com"}`), p("text", `{"text":"It is package main."}`), p("finish", `{"reason":"end_turn","time":1}`)), "gpt-5", "openai", t0 + 10, 0},
	{"msg_s1", subID, "user", parts(p("text", `{"text":"explore the repo"}`)), "", "", t0 + 2, 0},
	{"msg_s2", subID, "assistant", parts(p("text", `{"text":"It holds a.go."}`), p("finish", `{"reason":"end_turn","time":1}`)), "claude-haiku-4-5", "anthropic", t0 + 2, 0},
}

// crushDB writes a Crush database at path with the fixture's sessions.
func crushDB(t *testing.T, path string, version int64, extra ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := append([]string(nil), schema...)
	for _, v := range migrations {
		if v <= version {
			stmts = append(stmts, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (`+strconv.FormatInt(v, 10)+`, 1)`)
		}
	}
	if version > SchemaVersion {
		stmts = append(stmts, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (`+strconv.FormatInt(version, 10)+`, 1)`)
	}
	at := strconv.FormatInt(t0, 10)
	stmts = append(stmts,
		`INSERT INTO sessions (id, title, prompt_tokens, completion_tokens, cost, updated_at, created_at, summary_message_id) VALUES ('ses_a', 'Fix the build', 40, 12, 0.25, `+at+`, `+at+`, 'msg_a7')`,
		`INSERT INTO sessions (id, parent_session_id, title, cost, updated_at, created_at) VALUES ('`+subID+`', 'ses_a', 'New Agent Session', 0.01, `+at+`, `+strconv.FormatInt(t0+2, 10)+`)`,
	)
	for _, q := range append(stmts, extra...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, r := range rows {
		var model, provider any
		if r.model != "" {
			model, provider = r.model, r.provider
		}
		if _, err := db.Exec(`INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, provider, is_summary_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.id, r.session, r.role, r.parts, model, r.at, r.at, provider, r.summary); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProjects reads the databases projects.json lists (the global data
// directory, Crush's default location): the project in .crush and one
// whose data directory is elsewhere, each session with its project as
// the working directory.
func TestProjects(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	app, other := filepath.Join(tmp, "app"), filepath.Join(tmp, "other")
	crushDB(t, filepath.Join(app, ".crush", "crush.db"), SchemaVersion)
	crushDB(t, filepath.Join(tmp, "data", "other", "crush.db"), SchemaVersion)
	global := filepath.Join(tmp, "global")
	if err := os.MkdirAll(global, 0o700); err != nil {
		t.Fatal(err)
	}
	list := `{"projects":[{"path":` + q(app) + `,"data_dir":` + q(filepath.Join(app, ".crush")) + `,"last_accessed":"2026-06-01T10:00:00Z"},` +
		`{"path":` + q(other) + `,"data_dir":` + q(filepath.Join(tmp, "data", "other")) + `,"last_accessed":"2026-06-01T09:00:00Z"},` +
		`{"path":` + q(filepath.Join(tmp, "gone")) + `,"data_dir":` + q(filepath.Join(tmp, "gone", ".crush")) + `,"last_accessed":"2026-05-01T09:00:00Z"}]}`
	if err := os.WriteFile(filepath.Join(global, "projects.json"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{global, app, filepath.Join(app, ".crush"), filepath.Join(app, ".crush", "crush.db")} {
		if !(Source{}).Detect(path) {
			t.Errorf("Detect(%s) = false", path)
		}
	}
	res := importtest.Import(t, Source{}, global, migrate.ImportOptions{Cwd: "/fallback"})
	if len(res.Sessions) != 4 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	cwds := map[string]int{}
	for _, s := range res.Sessions {
		if !s.CwdKnown {
			t.Errorf("%s: cwd not from the project", s.SourceID)
		}
		cwds[s.Cwd]++
	}
	if cwds[app] != 2 || cwds[other] != 2 {
		t.Errorf("working directories %v", cwds)
	}
	// A database given alone, not in .crush: its sessions get the
	// fallback working directory.
	res = importtest.Import(t, Source{}, filepath.Join(tmp, "data", "other", "crush.db"), migrate.ImportOptions{Cwd: "/fallback"})
	if len(res.Sessions) != 2 || res.Sessions[0].Cwd != "/fallback" || res.Sessions[0].CwdKnown {
		t.Errorf("a lone database: %d sessions, cwd %q", len(res.Sessions), res.Sessions[0].Cwd)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	proj := filepath.Join(t.TempDir(), "app")
	db := filepath.Join(proj, ".crush", "crush.db")
	crushDB(t, db, SchemaVersion)
	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, proj, opts)
	if len(res.Sessions) != 2 || len(res.Skipped) != 0 {
		t.Fatalf("%d sessions, skipped %v", len(res.Sessions), res.Skipped)
	}
	// The part of an unknown type is reported, and kept.
	if len(res.Damage) != 1 || res.Damage[0].Path != db || res.Damage[0].Pos != "message msg_a11 part 0" || !strings.Contains(res.Damage[0].Error(), `"citation"`) {
		t.Errorf("damage %v, want the citation part of msg_a11", res.Damage)
	}
	if res.Sessions[0].SourceID != "ses_a" {
		t.Errorf("the parent is not first: %s", res.Sessions[0].SourceID)
	}
	a := res.ByID(t, "ses_a")
	if a.Cwd != proj || a.Name != "Fix the build" || a.SourcePath != db || !a.Start.Equal(time.Unix(t0, 0).UTC()) {
		t.Errorf("ses_a: cwd %q name %q path %s start %v", a.Cwd, a.Name, a.SourcePath, a.Start)
	}
	l := importtest.Load(t, a, "")
	want := []importtest.Msg{
		{Role: "compactionSummary", Text: "## Summary\nListed the files."},
		{Role: "user", Text: "view a.go"},
		{Role: "assistant", ToolCalls: []string{"call_view"}},
		{Role: "toolResult", Text: "(no result recorded)", ToolCallID: "call_view"},
		{Role: "user", Text: "again"},
		{Role: "assistant", Text: "It is package main."},
	}
	if diff := cmp.Diff(want, l.Messages()); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	var full []importtest.Msg
	for _, e := range l.Index.Branch(l.Entries[len(l.Entries)-1].ID) {
		if m, ok := e.Field("message"); ok {
			full = append(full, importtest.Reduce(m))
		}
		if e.Type == jsonl.TypeCustomMessage {
			m := importtest.Reduce(e.Raw)
			m.Role = "custom"
			full = append(full, m)
		}
	}
	wantFull := []importtest.Msg{
		{Role: "user", Text: "list files\n[file: /w/app/notes.txt]\nremember the tests\n"},
		{Role: "assistant", Text: "Listing.", ToolCalls: []string{"call_ls", "call_agent"}},
		{Role: "toolResult", Text: "a.go\n", ToolCallID: "call_ls"},
		{Role: "toolResult", Text: "It holds a.go.", ToolCallID: "call_agent"},
		{Role: "assistant", Text: "One file."},
		{Role: "custom", Text: "$ git status\nclean\n\n(exit code 0)", CustomType: "crush-shell"},
	}
	wantFull = append(wantFull, want[1:]...)
	if diff := cmp.Diff(wantFull, full); diff != "" {
		t.Errorf("branch (-want +got):\n%s", diff)
	}
	importtest.CheckToolPairs(t, "ses_a", full)
	file := string(a.Bytes(""))
	for _, frag := range []string{
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`,
		`"thinking":"run ls","thinkingSignature":"sig1"`,
		`"arguments":{"command":"ls"}`,
		`"details":{"exit_code":0}`,
		`"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5"`,
		`"stopReason":"aborted"`,
		`"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":40,"output":12,"cacheRead":0,"cacheWrite":0,"totalTokens":52,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.25}}`,
		`"customType":"crush-part","data":{"role":"assistant","parts":[{"type":"citation","data":{"url":"https://example.com"}}]}`,
		`"type":"compaction"`,
		`"timestamp":"2026-06-01T10:00:01.000Z"`,
	} {
		if !strings.Contains(file, frag) {
			t.Errorf("imported file lacks %s", frag)
		}
	}
	sub := res.ByID(t, subID)
	if sub.ParentSourceID != "ses_a" || sub.Name != "New Agent Session" {
		t.Errorf("subagent: parent %q name %q", sub.ParentSourceID, sub.Name)
	}
	if diff := cmp.Diff([]importtest.Msg{{Role: "user", Text: "explore the repo"}, {Role: "assistant", Text: "It holds a.go."}},
		importtest.Load(t, sub, "/pi/parent.jsonl").Messages()); diff != "" {
		t.Errorf("subagent (-want +got):\n%s", diff)
	}
	importtest.CheckReimport(t, Source{}, proj, opts, res)
}

// TestDamage: a message whose parts are not UTF-8 is reported with the
// database and the message; a database migrated past the schema this
// importer knows is reported naming its version, and the others are read.
func TestDamage(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	db := filepath.Join(tmp, "a", ".crush", "crush.db")
	crushDB(t, db, SchemaVersion, `INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('ses_bad', 'Bad', 1, 1)`,
		`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('msg_bad', 'ses_bad', 'user', CAST(X'5b7b2274797065223a2274657874222c2264617461223a7b2274657874223a22ff227d7d5d' AS TEXT), 1, 1)`)
	res := importtest.Import(t, Source{}, db, migrate.ImportOptions{})
	var bad []*migrate.Damage
	for _, d := range res.Damage {
		if d.Pos == "message msg_bad" {
			bad = append(bad, d)
		}
	}
	if len(bad) != 1 || bad[0].Path != db || !errors.Is(bad[0], migrate.ErrInvalidUTF8) {
		t.Errorf("damage %v", res.Damage)
	}
	var skipped []string
	for _, sk := range res.Skipped {
		skipped = append(skipped, sk.SourceID)
	}
	if len(skipped) != 1 || skipped[0] != "ses_bad" {
		t.Errorf("skipped %v, want ses_bad (nothing left of it)", skipped)
	}

	newer := filepath.Join(tmp, "b", ".crush", "crush.db")
	crushDB(t, newer, 20270101000000)
	global := filepath.Join(tmp, "global")
	if err := os.MkdirAll(global, 0o700); err != nil {
		t.Fatal(err)
	}
	list := `{"projects":[{"path":` + q(filepath.Join(tmp, "a")) + `,"data_dir":` + q(filepath.Dir(db)) + `},{"path":` + q(filepath.Join(tmp, "b")) + `,"data_dir":` + q(filepath.Dir(newer)) + `}]}`
	if err := os.WriteFile(filepath.Join(global, "projects.json"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Source{}.Open(t.Context(), global, migrate.ImportOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var errs []error
	n := 0
	for _, err := range st.Sessions(t.Context()) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "20270101000000") || !strings.Contains(errs[0].Error(), newer) {
		t.Errorf("errors %v, want one naming %s and its version", errs, newer)
	}
	if n != 3 {
		t.Errorf("%d sessions listed from the other database, want 3", n)
	}
}

func TestLocations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  map[string]string
		goos string
		want string
	}{
		{nil, "linux", "/h/.local/share/crush"},
		{nil, "darwin", "/h/.local/share/crush"},
		{map[string]string{"XDG_DATA_HOME": "/xdg"}, "linux", "/xdg/crush"},
		{map[string]string{"CRUSH_GLOBAL_DATA": "/g", "XDG_DATA_HOME": "/xdg"}, "linux", "/g"},
		{map[string]string{"LOCALAPPDATA": "/local"}, "windows", "/local/crush"},
	}
	for _, c := range cases {
		got := Source{}.Locations(migrate.Locator{Getenv: func(k string) string { return c.env[k] }, Home: "/h", GOOS: c.goos})
		if len(got) != 1 || filepath.ToSlash(got[0]) != c.want {
			t.Errorf("%v %s: %v, want %s", c.env, c.goos, got, c.want)
		}
	}
}

// q is s as a JSON string (a Windows path holds backslashes).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
