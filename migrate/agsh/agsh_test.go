package agsh

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

func TestCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(importtest.Corpus(t, "agsh"), "handmade-v0.1.0-schema", "agsh-data")
	opts := migrate.ImportOptions{Cwd: "/home/me"}
	res := importtest.Import(t, Source{}, dir, opts)
	if len(res.Damage) > 0 || len(res.Sessions) != 2 {
		t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
	}
	cases := []struct {
		id   string
		want []importtest.Msg
	}{
		{"7c1d5e2a-3b4f-4a6c-9d8e-0f1a2b3c4d5e", []importtest.Msg{
			{Role: "user", Text: "what's using port 8080 on this box?"},
			{Role: "assistant", Text: "Let me check which process is listening on 8080.", ToolCalls: []string{"toolu_01Ab3CdE5fG7hJ9kL1mN3pQ5"}},
			{Role: "toolResult", Text: "State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\nLISTEN 0      4096         0.0.0.0:8080      0.0.0.0:*     users:((\"java\",pid=2241,fd=48))", ToolCallID: "toolu_01Ab3CdE5fG7hJ9kL1mN3pQ5"},
			{Role: "assistant", Text: "A Java process (PID 2241) is listening on 0.0.0.0:8080."},
			{Role: "user", Text: "stop it"},
			{Role: "assistant", ToolCalls: []string{"toolu_01Rs7TuV9wX1yZ3aB5cD7eF9"}},
			{Role: "toolResult", Text: "Permission denied: 'execute_command' requires write permission, current: read", ToolCallID: "toolu_01Rs7TuV9wX1yZ3aB5cD7eF9"},
			{Role: "assistant", Text: "I can't do that in read-only mode. Restart agsh with `-p write` (or run `kill 2241` yourself)."},
		}},
		{"e3f9a1c7-5d2b-4e8f-a6c4-1b0d9e8f7a62", []importtest.Msg{
			{Role: "user", Text: "summarize README.md"},
			{Role: "assistant", ToolCalls: []string{"toolu_01Gh2Ij4Kl6Mn8Op0Qr2St4U"}},
			{Role: "toolResult", Text: "Tool execution interrupted.", ToolCallID: "toolu_01Gh2Ij4Kl6Mn8Op0Qr2St4U"},
		}},
	}
	for _, c := range cases {
		s := res.ByID(t, c.id)
		if s.Cwd != "/home/me" || s.CwdKnown {
			t.Errorf("%s: cwd %q", c.id, s.Cwd)
		}
		got := importtest.Load(t, s, "").Messages()
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.id, diff)
		}
		importtest.CheckToolPairs(t, c.id, got)
	}
	if !strings.Contains(string(res.Sessions[0].Bytes("")), `"isError":true`) {
		t.Error("is_error lost")
	}
	importtest.CheckReimport(t, Source{}, dir, opts, res)
}

// TestDamagedRow builds an agsh database with the driver, with a hot
// rollback journal beside it (so it is copied, never touched) and a row
// whose content is not JSON.
func TestDamagedRow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, locked_by TEXT, metadata TEXT)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL)`,
		`INSERT INTO sessions VALUES ('s1', '2026-03-05T14:02:11.480077812+00:00', '2026-03-05T14:02:11.480077812+00:00', '999', '{"cwd":"/srv"}')`,
		`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'user', 'hi', '2026-03-05T14:02:11.482193157+00:00')`,
		`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'assistant', '[{"type":"text"', '2026-03-05T14:02:12+00:00')`,
		`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'assistant', '[{"type":"text","text":"hello"}]', '2026-03-05T14:02:13+00:00')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-journal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Error() != path+" (message 2): unexpected end of JSON input" {
		t.Fatalf("damage %v", res.Damage)
	}
	s := res.ByID(t, "s1")
	if s.Cwd != "/srv" || s.Start.Format("15:04:05.000") != "14:02:11.480" {
		t.Errorf("cwd %q start %v", s.Cwd, s.Start)
	}
	got := importtest.Load(t, s, "").Messages()
	want := []importtest.Msg{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the source database changed")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("files beside the database: %v", ents)
	}
}
