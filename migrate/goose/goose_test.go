package goose

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// schemaV17 is Goose's create_schema at version 17 (session_manager.rs),
// the tables the importer reads, as Goose creates them.
var schemaV17 = []string{
	`PRAGMA journal_mode=WAL`,
	`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
	`CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL DEFAULT '',
		description TEXT NOT NULL DEFAULT '',
		user_set_name BOOLEAN DEFAULT FALSE,
		session_type TEXT NOT NULL DEFAULT 'user',
		working_dir TEXT NOT NULL,
		created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
		updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
		extension_data TEXT DEFAULT '{}',
		total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
		cache_read_tokens INTEGER, cache_write_tokens INTEGER,
		accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
		accumulated_cache_read_tokens INTEGER, accumulated_cache_write_tokens INTEGER,
		accumulated_cost REAL,
		schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT,
		provider_name TEXT, model_config_json TEXT,
		goose_mode TEXT NOT NULL DEFAULT 'auto',
		archived_at TIMESTAMP, project_id TEXT,
		parent_session_id TEXT,
		parent_delegation TEXT)`,
	`CREATE TABLE messages (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		message_id TEXT,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		role TEXT NOT NULL,
		content_json TEXT NOT NULL,
		created_timestamp INTEGER NOT NULL,
		timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
		tokens INTEGER,
		metadata_json TEXT)`,
	`CREATE TABLE usage_ledger (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		created_timestamp INTEGER NOT NULL,
		model TEXT,
		input_tokens INTEGER, output_tokens INTEGER, total_tokens INTEGER,
		cache_read_tokens INTEGER, cache_write_tokens INTEGER,
		cost REAL, cost_source TEXT,
		is_compaction INTEGER DEFAULT 0)`,
	`CREATE INDEX idx_messages_session ON messages(session_id)`,
	`CREATE INDEX idx_messages_session_created ON messages(session_id, created_timestamp, id)`,
	`CREATE INDEX idx_sessions_parent ON sessions(parent_session_id)`,
	`CREATE INDEX idx_usage_ledger_session ON usage_ledger(session_id)`,
	`INSERT INTO schema_version (version) VALUES (17)`,
}

const (
	hidden = `{"userVisible":true,"agentVisible":false}`
	agent  = `{"userVisible":false,"agentVisible":true}`
	both   = `{"userVisible":true,"agentVisible":true}`
)

// gooseMsg is a messages row of the fixture.
type gooseMsg struct {
	session, role, content, meta string
	at                           int64
}

var t0 = time.Date(2026, 5, 12, 9, 0, 0, 0, time.UTC).Unix()

// The fixture: session 20260512_1 has a tool loop (a result, an error
// result, a request Goose could not parse and so no response), then a
// compaction (earlier messages hidden from the agent, the summary, the
// continuation, the prompt again), a reply with usage and a notification
// shown to the user only; 20260512_2 is its subagent.
var fixtureMsgs = []gooseMsg{
	{"20260512_1", "user", `[{"type":"text","text":"list files"}]`, hidden, t0 + 1},
	{"20260512_1", "assistant", `[{"type":"thinking","thinking":"run ls","signature":"sig1"},{"type":"text","text":"Listing."},{"type":"toolRequest","id":"toolu_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]`, hidden, t0 + 2},
	{"20260512_1", "user", `[{"type":"toolResponse","id":"toolu_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"a.go\n"}],"isError":false}}}]`, hidden, t0 + 3},
	{"20260512_1", "assistant", `[{"type":"toolRequest","id":"toolu_2","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"command":"view","path":"/w/app/b.go"}}}},{"type":"toolRequest","id":"toolu_3","toolCall":{"status":"error","error":"-32602: bad arguments"}}]`, hidden, t0 + 4},
	{"20260512_1", "user", `[{"type":"toolResponse","id":"toolu_2","toolResult":{"status":"error","error":"no such file"}}]`, hidden, t0 + 5},
	{"20260512_1", "assistant", `[{"type":"text","text":"Only a.go."}]`, hidden, t0 + 6},
	{"20260512_1", "user", `[{"type":"text","text":"## Summary\nListed the files."}]`, agent, t0 + 7},
	{"20260512_1", "assistant", `[{"type":"text","text":"Your context was compacted. The previous message contains a summary of the conversation so far."}]`, agent, t0 + 7},
	{"20260512_1", "user", `[{"type":"text","text":"and the tests?"}]`, both, t0 + 8},
	{"20260512_1", "assistant", `[{"type":"text","text":"None yet."}]`, both, t0 + 9},
	{"20260512_1", "user", `[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Conversation cleared"}]`, hidden, t0 + 10},
	{"20260512_2", "user", `[{"type":"text","text":"explore the repo"}]`, both, t0 + 20},
	{"20260512_2", "assistant", `[{"type":"text","text":"It holds a.go."}]`, both, t0 + 21},
}

// gooseDB writes the fixture database into dir/sessions.db.
func gooseDB(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sessions.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := append(append([]string(nil), schemaV17...),
		`INSERT INTO sessions (id, name, session_type, working_dir, created_at, provider_name, model_config_json, input_tokens, output_tokens, total_tokens)
		 VALUES ('20260512_1', 'Fix the build', 'user', '/w/app', '2026-05-12 09:00:00', 'anthropic', '{"model_name":"claude-sonnet-4-5","context_limit":200000}', 50, 5, 55)`,
		`INSERT INTO sessions (id, name, description, session_type, working_dir, created_at, provider_name, model_config_json, parent_session_id, parent_delegation)
		 VALUES ('20260512_2', '', 'Explore', 'sub_agent', '/w/app', '2026-05-12 09:00:20', 'anthropic', '{"model_name":"claude-haiku-4-5"}', '20260512_1',
		 '{"execution_mode":"foreground","parent_delegate_message_id":"msg_x","result_delivered_to_parent":true}')`,
	)
	for i, u := range []struct {
		in, out, cache int
		comp           int
	}{{100, 10, 0, 0}, {120, 12, 30, 0}, {140, 8, 0, 0}, {900, 40, 0, 1}, {60, 5, 0, 0}} {
		stmts = append(stmts, `INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, total_tokens, cache_read_tokens, cost, cost_source, is_compaction)
			VALUES ('20260512_1', `+itoa(int(t0)+2+2*i)+`, 'claude-sonnet-4-5', `+itoa(u.in)+`, `+itoa(u.out)+`, `+itoa(u.in+u.out+u.cache)+`, `+itoa(u.cache)+`, 0.01, 'estimated', `+itoa(u.comp)+`)`)
	}
	stmts = append(stmts, extra...)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, m := range fixtureMsgs {
		if _, err := db.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?)`,
			"msg_"+itoa(i), m.session, m.role, m.content, m.at, m.meta); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func itoa(i int) string { return strconv.Itoa(i) }

// entriesOf returns the entries of a loaded session of one type.
func entriesOf(l *importtest.Loaded, typ string) []jsonl.Entry {
	var out []jsonl.Entry
	for _, e := range l.Entries {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "goose", "sessions")
	db := gooseDB(t, dir)
	// A legacy file of the same session as the database's first: read
	// from the database, the file reported.
	dup := filepath.Join(dir, "20260512_1.jsonl")
	if err := os.WriteFile(dup, []byte(`{"working_dir":"/w/app","description":"old","message_count":1}`+"\n"+`{"role":"user","created":1778576401,"content":[{"type":"text","text":"list files"}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Dir(dir), db} {
		if !(Source{}).Detect(path) {
			t.Errorf("Detect(%s) = false", path)
		}
	}
	res := importtest.Import(t, Source{}, filepath.Dir(dir), migrate.ImportOptions{Cwd: "/fallback"})
	if len(res.Damage) != 0 || len(res.Sessions) != 2 {
		t.Fatalf("%d sessions, damage %v", len(res.Sessions), res.Damage)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != dup || res.Skipped[0].SourceID != "20260512_1" {
		t.Errorf("skipped %+v, want the legacy copy of 20260512_1", res.Skipped)
	}
	if res.Sessions[0].SourceID != "20260512_1" {
		t.Errorf("the parent is not first: %s", res.Sessions[0].SourceID)
	}

	a := res.ByID(t, "20260512_1")
	if a.Cwd != "/w/app" || !a.CwdKnown || a.Name != "Fix the build" || a.SourcePath != db ||
		!a.Start.Equal(time.Date(2026, 5, 12, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("session: cwd %q name %q path %s start %v", a.Cwd, a.Name, a.SourcePath, a.Start)
	}
	l := importtest.Load(t, a, "")
	want := []importtest.Msg{
		{Role: "compactionSummary", Text: "## Summary\nListed the files."},
		{Role: "assistant", Text: "Your context was compacted. The previous message contains a summary of the conversation so far."},
		{Role: "user", Text: "and the tests?"},
		{Role: "assistant", Text: "None yet."},
	}
	if diff := cmp.Diff(want, l.Messages()); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// The whole branch: the history before the compaction, tool calls
	// paired with their results.
	var full []importtest.Msg
	for _, e := range l.Index.Branch(l.Entries[len(l.Entries)-1].ID) {
		if m, ok := e.Field("message"); ok {
			full = append(full, importtest.Reduce(m))
		}
	}
	wantFull := []importtest.Msg{
		{Role: "user", Text: "list files"},
		{Role: "assistant", Text: "Listing.", ToolCalls: []string{"toolu_1"}},
		{Role: "toolResult", Text: "a.go\n", ToolCallID: "toolu_1"},
		{Role: "assistant", ToolCalls: []string{"toolu_2", "toolu_3"}},
		{Role: "toolResult", Text: "no such file", ToolCallID: "toolu_2"},
		{Role: "toolResult", Text: "(no result recorded)", ToolCallID: "toolu_3"},
		{Role: "assistant", Text: "Only a.go."},
		{Role: "assistant", Text: "Your context was compacted. The previous message contains a summary of the conversation so far."},
		{Role: "user", Text: "and the tests?"},
		{Role: "assistant", Text: "None yet."},
	}
	if diff := cmp.Diff(wantFull, full); diff != "" {
		t.Errorf("branch (-want +got):\n%s", diff)
	}
	importtest.CheckToolPairs(t, "branch", full)
	file := string(a.Bytes(""))
	for _, frag := range []string{
		`"thinking":"run ls","thinkingSignature":"sig1"`,
		`"arguments":{"command":"ls"}`,
		`"name":"invalid_tool_call","arguments":{"error":"-32602: bad arguments"}`,
		`"toolCallId":"toolu_2","toolName":"developer__text_editor","content":[{"type":"text","text":"no such file"}],"isError":true`,
		`"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5"`,
		`"usage":{"input":120,"output":12,"cacheRead":30,"cacheWrite":0,"totalTokens":162`,
		`"usage":{"input":60,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":65`,
		`"tokensBefore":900`,
		`"customType":"goose-message","data":{"role":"user","content":[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Conversation cleared"}]`,
		`"timestamp":"2026-05-12T09:00:01.000Z"`,
	} {
		if !strings.Contains(file, frag) {
			t.Errorf("imported file lacks %s", frag)
		}
	}
	if n := len(entriesOf(l, jsonl.TypeCompaction)); n != 1 {
		t.Errorf("%d compaction entries", n)
	}

	b := res.ByID(t, "20260512_2")
	if b.ParentSourceID != "20260512_1" || b.Name != "Explore" {
		t.Errorf("subagent: parent %q name %q", b.ParentSourceID, b.Name)
	}
	lb := importtest.Load(t, b, "/pi/parent.jsonl")
	if diff := cmp.Diff([]importtest.Msg{{Role: "user", Text: "explore the repo"}, {Role: "assistant", Text: "It holds a.go."}}, lb.Messages()); diff != "" {
		t.Errorf("subagent (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b.Bytes("")), `"model":"claude-haiku-4-5"`) {
		t.Error("subagent's model missing")
	}
	importtest.CheckReimport(t, Source{}, filepath.Dir(dir), migrate.ImportOptions{Cwd: "/fallback"}, res)
}

// TestLegacyFiles reads the JSONL session files of Goose before its
// database: metadata line, messages (a tool result in the old bare-array
// form), a damaged line (not UTF-8) reported with its line.
func TestLegacyFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "20250101_120000.jsonl")
	lines := []string{
		`{"working_dir":"/w/old","description":"Old session","schedule_id":null,"message_count":5,"total_tokens":1234,"input_tokens":1000,"output_tokens":234}`,
		`{"role":"user","created":1735732800,"content":[{"type":"text","text":"show the readme"}]}`,
		`{"role":"assistant","created":1735732802,"content":[{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"cat README"}}}}]}`,
		`{"role":"user","created":1735732803,"content":[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":[{"type":"text","text":"# readme"}]}}]}`,
		"{\"role\":\"assistant\",\"created\":1735732804,\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\"}]}",
		`{"role":"assistant","created":1735732805,"content":[{"type":"text","text":"It says readme."}]}`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !(Source{}).Detect(dir) || !(Source{}).Detect(file) {
		t.Error("a legacy sessions directory or file is not detected")
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != file || res.Damage[0].Line != 5 || !errors.Is(res.Damage[0], migrate.ErrInvalidUTF8) {
		t.Fatalf("damage %v, want line 5 of %s", res.Damage, file)
	}
	s := res.ByID(t, "20250101_120000")
	if s.Cwd != "/w/old" || s.Name != "Old session" || !s.Start.Equal(time.Unix(1735732800, 0).UTC()) || s.DateFromFile {
		t.Errorf("cwd %q name %q start %v", s.Cwd, s.Name, s.Start)
	}
	want := []importtest.Msg{
		{Role: "user", Text: "show the readme"},
		{Role: "assistant", ToolCalls: []string{"t1"}},
		{Role: "toolResult", Text: "# readme", ToolCallID: "t1"},
		{Role: "assistant", Text: "It says readme."},
	}
	if diff := cmp.Diff(want, importtest.Load(t, s, "").Messages()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(string(s.Bytes("")), `"provider":"unknown","model":"unknown"`) {
		t.Error("a reply without a recorded model does not say unknown")
	}
}

// TestDamagedRow: a message row whose content_json is not UTF-8 is
// reported with the database and the row, and the rest is imported.
func TestDamagedRow(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	db := gooseDB(t, dir, "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20260512_2', 'assistant', CAST(X'5b7b2274797065223a2274657874222c2274657874223a22ff227d5d' AS TEXT), "+itoa(int(t0)+30)+")")
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != db || !strings.HasPrefix(res.Damage[0].Pos, "message ") || !errors.Is(res.Damage[0], migrate.ErrInvalidUTF8) {
		t.Fatalf("damage %v", res.Damage)
	}
	if len(res.Sessions) != 2 {
		t.Errorf("%d sessions", len(res.Sessions))
	}
}

// TestNewerSchema: a database of a Goose newer than the schema this
// importer knows is refused with an error naming its version; a database
// without Goose's tables is not taken for Goose's.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	gooseDB(t, dir, `INSERT INTO schema_version (version) VALUES (18)`)
	_, err := Source{}.Open(t.Context(), dir, migrate.ImportOptions{TempDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "version 18") || !strings.Contains(err.Error(), "17") {
		t.Errorf("open: %v, want an error naming versions 18 and 17", err)
	}

	other := filepath.Join(t.TempDir(), "sessions.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE sessions (id TEXT); CREATE TABLE messages (id TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if (Source{}).Detect(other) || (Source{}).Detect(filepath.Dir(other)) {
		t.Error("a database without schema_version is taken for Goose's")
	}
}

func TestLocations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  map[string]string
		goos string
		want string
	}{
		{nil, "linux", "/h/.local/share/goose/sessions"},
		{nil, "darwin", "/h/.local/share/goose/sessions"},
		{map[string]string{"XDG_DATA_HOME": "/xdg"}, "linux", "/xdg/goose/sessions"},
		{map[string]string{"XDG_DATA_HOME": "relative"}, "linux", "/h/.local/share/goose/sessions"},
		{map[string]string{"GOOSE_PATH_ROOT": "/root/g", "XDG_DATA_HOME": "/xdg"}, "linux", "/root/g/data/sessions"},
		{map[string]string{"APPDATA": "/appdata"}, "windows", "/appdata/Block/goose/data/sessions"},
	}
	// An absolute path of the host running the test: a Windows one
	// needs a volume.
	abs := func(p string) string {
		if runtime.GOOS == "windows" && strings.HasPrefix(p, "/") {
			return "C:" + p
		}
		return p
	}
	for _, c := range cases {
		getenv := func(k string) string { return abs(c.env[k]) }
		got := Source{}.Locations(migrate.Locator{Getenv: getenv, Home: abs("/h"), GOOS: c.goos})
		if len(got) != 1 || filepath.ToSlash(got[0]) != abs(c.want) {
			t.Errorf("%v %s: %v, want %s", c.env, c.goos, got, c.want)
		}
	}
}
