package opencode

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

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The records of the fixture sessions, shared by the JSON and database
// forms. ses_a is a tool loop in one assistant message (two steps), with
// a subagent ses_b; ses_c was compacted and has a pending revert.
var (
	sessions = map[string]string{
		"ses_a": `{"id":"ses_a","projectID":"p1","directory":"/w/app","title":"Fix the build","version":"1.1.0","time":{"created":1760000000000,"updated":1760000100000}}`,
		"ses_b": `{"id":"ses_b","projectID":"p1","parentID":"ses_a","directory":"/w/app","title":"Explore","version":"1.1.0","time":{"created":1760000050000,"updated":1760000060000}}`,
		"ses_c": `{"id":"ses_c","projectID":"p1","directory":"/w/other","title":"Long one","version":"1.1.0","time":{"created":1760001000000,"updated":1760001100000},"revert":{"messageID":"msg_c5"}}`,
	}
	messages = []struct{ session, id, data string }{
		{"ses_a", "msg_a1", `{"id":"msg_a1","sessionID":"ses_a","role":"user","time":{"created":1760000001000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-x"}}`},
		{"ses_a", "msg_a2", `{"id":"msg_a2","sessionID":"ses_a","role":"assistant","time":{"created":1760000002000,"completed":1760000009000},"parentID":"msg_a1","modelID":"claude-x","providerID":"anthropic","mode":"build","path":{"cwd":"/w/app","root":"/w/app"},"cost":0.5,"tokens":{"input":30,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}`},
		{"ses_b", "msg_b1", `{"id":"msg_b1","sessionID":"ses_b","role":"user","time":{"created":1760000051000}}`},
		{"ses_b", "msg_b2", `{"id":"msg_b2","sessionID":"ses_b","role":"assistant","time":{"created":1760000052000},"modelID":"claude-y","providerID":"anthropic","cost":0,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"error":{"name":"MessageAbortedError","data":{"message":"aborted by user"}}}`},
		{"ses_c", "msg_c1", `{"id":"msg_c1","sessionID":"ses_c","role":"user","time":{"created":1760001001000}}`},
		{"ses_c", "msg_c2", `{"id":"msg_c2","sessionID":"ses_c","role":"assistant","time":{"created":1760001002000},"modelID":"gpt-x","providerID":"openai","cost":0,"tokens":{"input":5,"output":5,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}`},
		{"ses_c", "msg_c3", `{"id":"msg_c3","sessionID":"ses_c","role":"user","time":{"created":1760001003000}}`},
		{"ses_c", "msg_c4", `{"id":"msg_c4","sessionID":"ses_c","role":"assistant","summary":true,"time":{"created":1760001004000},"modelID":"gpt-x","providerID":"openai","cost":0,"tokens":{"input":900,"output":50,"reasoning":0,"cache":{"read":100,"write":0}},"finish":"stop"}`},
		{"ses_c", "msg_c5", `{"id":"msg_c5","sessionID":"ses_c","role":"user","time":{"created":1760001005000}}`},
		{"ses_c", "msg_c6", `{"id":"msg_c6","sessionID":"ses_c","role":"assistant","time":{"created":1760001006000},"modelID":"gpt-x","providerID":"openai","cost":0,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}`},
	}
	parts = []struct{ msg, id, data string }{
		{"msg_a1", "prt_a1a", `{"type":"text","text":"make the build pass"}`},
		{"msg_a1", "prt_a1b", `{"type":"text","text":"hidden","ignored":true}`},
		{"msg_a1", "prt_a1c", `{"type":"file","mime":"image/png","filename":"x.png","url":"data:image/png;base64,iVBORw0KGgo="}`},
		{"msg_a2", "prt_a2a", `{"type":"step-start"}`},
		{"msg_a2", "prt_a2b", `{"type":"reasoning","text":"check the log","time":{"start":1}}`},
		{"msg_a2", "prt_a2c", `{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{"command":"make"},"output":"error: x","title":"make","metadata":{},"time":{"start":1,"end":2}}}`},
		{"msg_a2", "prt_a2d", `{"type":"tool","callID":"call_2","tool":"read","state":{"status":"error","input":{"filePath":"/w/app/x"},"error":"no such file","time":{"start":1,"end":2}}}`},
		{"msg_a2", "prt_a2e", `{"type":"step-finish","reason":"tool-calls","cost":0.2,"tokens":{"input":10,"output":5,"reasoning":2,"cache":{"read":3,"write":4}}}`},
		{"msg_a2", "prt_a2f", `{"type":"step-start"}`},
		{"msg_a2", "prt_a2g", `{"type":"tool","callID":"call_3","tool":"task","state":{"status":"running","input":{"prompt":"explore"},"time":{"start":1}}}`},
		{"msg_a2", "prt_a2h", `{"type":"step-finish","reason":"tool-calls","cost":0.1,"tokens":{"input":20,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}}`},
		{"msg_a2", "prt_a2i", `{"type":"step-start"}`},
		{"msg_a2", "prt_a2j", `{"type":"text","text":"fixed"}`},
		{"msg_a2", "prt_a2k", `{"type":"step-finish","reason":"stop","cost":0.2,"tokens":{"input":30,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}`},
		{"msg_b1", "prt_b1a", `{"type":"text","text":"explore"}`},
		{"msg_b2", "prt_b2a", `{"type":"text","text":"partial"}`},
		{"msg_c1", "prt_c1a", `{"type":"text","text":"one"}`},
		{"msg_c2", "prt_c2a", `{"type":"text","text":"reply one"}`},
		{"msg_c3", "prt_c3a", `{"type":"compaction","auto":true}`},
		{"msg_c4", "prt_c4a", `{"type":"text","text":"the summary"}`},
		{"msg_c5", "prt_c5a", `{"type":"text","text":"reverted question"}`},
		{"msg_c6", "prt_c6a", `{"type":"text","text":"reverted answer"}`},
	}
)

// check verifies the three fixture sessions, however they were stored.
func check(t *testing.T, res *importtest.Result) {
	t.Helper()
	if len(res.Sessions) != 3 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	if res.Sessions[0].SourceID != "ses_a" || res.Sessions[1].SourceID != "ses_b" {
		t.Errorf("order: %s %s (parents first)", res.Sessions[0].SourceID, res.Sessions[1].SourceID)
	}
	a := res.ByID(t, "ses_a")
	if a.Cwd != "/w/app" || a.Name != "Fix the build" || a.SourceVersion != "1.1.0" {
		t.Errorf("ses_a: cwd %q name %q version %q", a.Cwd, a.Name, a.SourceVersion)
	}
	la := importtest.Load(t, a, "")
	got := la.Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "make the build pass"},
		{Role: "assistant", ToolCalls: []string{"call_1", "call_2"}},
		{Role: "toolResult", Text: "error: x", ToolCallID: "call_1"},
		{Role: "toolResult", Text: "no such file", ToolCallID: "call_2"},
		{Role: "assistant", ToolCalls: []string{"call_3"}},
		{Role: "toolResult", Text: "(the tool did not finish)", ToolCallID: "call_3"},
		{Role: "assistant", Text: "fixed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ses_a (-want +got):\n%s", diff)
	}
	importtest.CheckToolPairs(t, "ses_a", got)
	file := string(a.Bytes(""))
	for _, frag := range []string{
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`,
		`"usage":{"input":10,"output":7,"cacheRead":3,"cacheWrite":4,"totalTokens":24,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.2}}`,
		`"api":"anthropic-messages","provider":"anthropic","model":"claude-x"`,
		`"thinking":"check the log"`,
	} {
		if !strings.Contains(file, frag) {
			t.Errorf("ses_a lacks %s", frag)
		}
	}
	if strings.Contains(file, "hidden") {
		t.Error("an ignored part was imported")
	}
	b := res.ByID(t, "ses_b")
	if b.ParentSourceID != "ses_a" {
		t.Errorf("ses_b parent %q", b.ParentSourceID)
	}
	if f := string(importtest.Load(t, b, "/p/a.jsonl").Entries[len(importtest.Load(t, b, "/p/a.jsonl").Entries)-1].Raw); !strings.Contains(f, `"stopReason":"aborted","errorMessage":"aborted by user"`) {
		t.Errorf("ses_b last entry %s", f)
	}
	c := res.ByID(t, "ses_c")
	lc := importtest.Load(t, c, "")
	got = lc.Messages()
	want = []importtest.Msg{{Role: "compactionSummary", Text: "the summary"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ses_c (-want +got):\n%s", diff)
	}
	cf := string(c.Bytes(""))
	if !strings.Contains(cf, "reverted answer") || !strings.Contains(cf, `"customType":"sessctl-import-leaf"`) || !strings.Contains(cf, `"tokensBefore":1000`) {
		t.Errorf("ses_c: reverted branch, leaf marker or tokensBefore missing")
	}
}

func TestJSONStorage(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	st := filepath.Join(data, "storage")
	for id, s := range sessions {
		write(t, filepath.Join(st, "session", "p1", id+".json"), s)
	}
	for _, m := range messages {
		write(t, filepath.Join(st, "message", m.session, m.id+".json"), m.data)
	}
	for _, p := range parts {
		write(t, filepath.Join(st, "part", p.msg, p.id+".json"), `{"id":"`+p.id+`","messageID":"`+p.msg+`",`+p.data[1:])
	}
	bad := filepath.Join(st, "part", "msg_a1", "prt_a1z.json")
	write(t, bad, `{"type":`)
	res := importtest.Import(t, Source{}, data, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != bad {
		t.Fatalf("damage %v", res.Damage)
	}
	check(t, res)
	importtest.CheckReimport(t, Source{}, data, migrate.ImportOptions{}, res)
}

// TestDatabase stores the sessions in an opencode.db built with the
// driver (WAL mode, as opencode runs it), with ses_a also left behind in
// the JSON storage with an older title: the database wins, nothing is
// imported twice.
func TestDatabase(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	write(t, filepath.Join(data, "storage", "session", "p1", "ses_a.json"), strings.Replace(sessions["ses_a"], "Fix the build", "old title", 1))
	db, err := sql.Open("sqlite", filepath.Join(data, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, revert TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rows := []struct{ id, parent, dir, title, revert string }{
		{"ses_a", "", "/w/app", "Fix the build", ""},
		{"ses_b", "ses_a", "/w/app", "Explore", ""},
		{"ses_c", "", "/w/other", "Long one", `{"messageID":"msg_c5"}`},
	}
	created := map[string]int64{"ses_a": 1760000000000, "ses_b": 1760000050000, "ses_c": 1760001000000}
	for _, r := range rows {
		var parent, revert any
		if r.parent != "" {
			parent = r.parent
		}
		if r.revert != "" {
			revert = r.revert
		}
		if _, err := db.Exec(`INSERT INTO session VALUES (?, 'p1', ?, 'slug', ?, ?, '1.1.0', ?, ?, ?)`, r.id, parent, r.dir, r.title, revert, created[r.id], created[r.id]); err != nil {
			t.Fatal(err)
		}
	}
	sessionOf := map[string]string{}
	for _, m := range messages {
		sessionOf[m.id] = m.session
		if _, err := db.Exec(`INSERT INTO message VALUES (?, ?, 0, 0, ?)`, m.id, m.session, m.data); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range parts {
		if _, err := db.Exec(`INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)`, p.id, p.msg, sessionOf[p.msg], p.data); err != nil {
			t.Fatal(err)
		}
	}
	res := importtest.Import(t, Source{}, data, migrate.ImportOptions{})
	if len(res.Damage) != 0 {
		t.Fatalf("damage %v", res.Damage)
	}
	check(t, res)
	if p := res.ByID(t, "ses_a").SourcePath; p != filepath.Join(data, "opencode.db") {
		t.Errorf("ses_a read from %s", p)
	}
}

func TestLocations(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_DATA_HOME": "/xdg", "OPENCODE_DB": "/db/oc.db"}
	got := Source{}.Locations(migrate.Locator{Getenv: func(k string) string { return env[k] }, Home: "/h"})
	if diff := cmp.Diff([]string{"/db/oc.db", filepath.Join("/xdg", "opencode")}, got); diff != "" {
		t.Error(diff)
	}
}
