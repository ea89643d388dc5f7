package opencode

import (
	"database/sql"
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

// schema20 is the DDL of an opencode 2.0.x database (schema.gen.ts as
// captured from 2.0.3 to 2.0.25 stores) for the tables the importer
// reads: session_v2 and session_message (its foreign key on session_v2),
// beside the 1.x tables session, message and part that 2.0 keeps, and the
// migration journal.
var schema20 = []string{
	`PRAGMA journal_mode=WAL`,
	"CREATE TABLE `migration` (`id` text PRIMARY KEY, `time_completed` integer NOT NULL)",
	"CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `sandboxes` text NOT NULL)",
	"CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `cost` real DEFAULT 0 NOT NULL, `revert` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer)",
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
	"CREATE TABLE `session_v2` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `fork_session_id` text, `fork_boundary` text, `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text, `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text, `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer, `time_suspended` integer, `resume_attempts` integer DEFAULT 0 NOT NULL, `time_idle` integer, `time_viewed` integer, `idle_outcome` text, CONSTRAINT `fk_session_v2_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE)",
	"CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_session_message_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE)",
	"CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`)",
	"INSERT INTO `migration` VALUES ('20260622170816_reset_v2_session_state', 1788000000000)",
	"INSERT INTO `project` VALUES ('p1', '/w/app', 'git', 'app', 1788000000000, 1788000000000, '[]')",
}

// v2 message rows of the fixture: ses_v2 is a 2.0 session (a tool loop
// with a result, an error and a call that never ran, a user shell
// command, a completed and a failed compaction, a model switch, an idle
// marker); ses_fork is a fork of it (its first three rows are copies),
// ses_sub its subagent, ses_mig a 1.x session opencode 2 migrated (in
// both the v1 and the v2 tables).
var rows20 = []struct{ session, id, typ, data string }{
	{"ses_v2", "msg_01", "user", `{"time":{"created":1788256800000},"text":"add a README","files":[{"uri":"data:image/png;base64,iVBORw0KGgo=","mime":"image/png","name":"x.png"}]}`},
	{"ses_v2", "msg_02", "assistant", `{"time":{"created":1788256801000,"completed":1788256805000},"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"reasoning","id":"r1","text":"write it"},{"type":"text","id":"t1","text":"Writing."},{"type":"tool","id":"call_1","name":"write","state":{"status":"completed","input":{"filePath":"README.md"},"content":[{"type":"text","text":"Wrote file"}],"structured":{}}},{"type":"tool","id":"call_2","name":"read","state":{"status":"error","input":{"filePath":"x"},"content":[],"error":{"type":"tool.execution","message":"no such file"}}},{"type":"tool","id":"call_3","name":"bash","state":{"status":"pending","input":"{\"command\":\"ls\"}"}}],"finish":"tool-calls","cost":0.01,"tokens":{"input":30,"output":40,"reasoning":10,"cache":{"read":500,"write":100}}}`},
	{"ses_v2", "msg_03", "shell", `{"time":{"created":1788256806000,"completed":1788256807000},"command":"ls","status":"exited","exit":0,"output":{"output":"README.md\n","truncated":false},"shellID":"sh_1"}`},
	{"ses_v2", "msg_04", "compaction", `{"time":{"created":1788256808000},"status":"failed","error":{"type":"compaction.failed","message":"provider error"}}`},
	{"ses_v2", "msg_05", "compaction", `{"time":{"created":1788256809000},"status":"completed","reason":"auto","summary":"## Objective\nA README."}`},
	{"ses_v2", "msg_06", "model-switched", `{"time":{"created":1788256810000},"model":{"id":"gpt-5","providerID":"openai"},"previous":{"id":"claude-sonnet-4-5","providerID":"anthropic"}}`},
	{"ses_v2", "msg_07", "user", `{"time":{"created":1788256811000},"text":"thanks"}`},
	{"ses_v2", "msg_08", "assistant", `{"time":{"created":1788256812000},"agent":"build","model":{"id":"gpt-5","providerID":"openai"},"content":[{"type":"text","id":"t2","text":"Done."}],"finish":"stop","cost":0.002,"tokens":{"input":5,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}`},
	{"ses_v2", "msg_09", "idle", `{"time":{"created":1788256813000},"outcome":"succeeded"}`},
	{"ses_fork", "msg_f1", "user", `{"time":{"created":1788256800000},"text":"add a README","files":[{"uri":"data:image/png;base64,iVBORw0KGgo=","mime":"image/png","name":"x.png"}]}`},
	{"ses_fork", "msg_f2", "assistant", `{"time":{"created":1788256801000,"completed":1788256805000},"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"reasoning","id":"r1","text":"write it"},{"type":"text","id":"t1","text":"Writing."},{"type":"tool","id":"call_1","name":"write","state":{"status":"completed","input":{"filePath":"README.md"},"content":[{"type":"text","text":"Wrote file"}],"structured":{}}},{"type":"tool","id":"call_2","name":"read","state":{"status":"error","input":{"filePath":"x"},"content":[],"error":{"type":"tool.execution","message":"no such file"}}},{"type":"tool","id":"call_3","name":"bash","state":{"status":"pending","input":"{\"command\":\"ls\"}"}}],"finish":"tool-calls","cost":0.01,"tokens":{"input":30,"output":40,"reasoning":10,"cache":{"read":500,"write":100}}}`},
	{"ses_fork", "msg_f3", "shell", `{"time":{"created":1788256806000,"completed":1788256807000},"command":"ls","status":"exited","exit":0,"output":{"output":"README.md\n","truncated":false},"shellID":"sh_1"}`},
	{"ses_fork", "msg_f4", "user", `{"time":{"created":1788260000000},"text":"make it shorter"}`},
	{"ses_fork", "msg_f5", "assistant", `{"time":{"created":1788260001000},"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"text","id":"t9","text":"Shortened."}],"finish":"stop"}`},
	{"ses_sub", "msg_s1", "user", `{"time":{"created":1788256802000},"text":"You are a subagent spawned by another session.\nlook around"}`},
	{"ses_sub", "msg_s2", "assistant", `{"time":{"created":1788256803000},"agent":"explore","model":{"id":"claude-haiku-4-5","providerID":"anthropic"},"content":[{"type":"text","id":"t3","text":"One file."}],"finish":"stop"}`},
	{"ses_mig", "msg_m1", "user", `{"time":{"created":1787000001000},"text":"old question"}`},
	{"ses_mig", "msg_m2", "assistant", `{"time":{"created":1787000002000},"agent":"build","model":{"id":"gpt-4.1","providerID":"openai"},"content":[{"type":"text","id":"t4","text":"old answer"}],"finish":"stop"}`},
}

// db20 writes the fixture store: an opencode 2.0 database.
func db20(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "opencode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := append([]string(nil), schema20...)
	v2 := func(id, parent, fork, title string, created int64) string {
		q := func(s string) string {
			if s == "" {
				return "NULL"
			}
			return "'" + s + "'"
		}
		return "INSERT INTO session_v2 (id, project_id, parent_id, fork_session_id, fork_boundary, slug, directory, title, version, time_created, time_updated) VALUES ('" +
			id + "', 'p1', " + q(parent) + ", " + q(fork) + ", " + map[bool]string{true: `'{"seq":3}'`, false: "NULL"}[fork != ""] + ", 'slug', '/w/app', " + q(title) + ", '2.0.15', " + itoa64(created) + ", " + itoa64(created) + ")"
	}
	stmts = append(stmts,
		v2("ses_mig", "", "", "Migrated", 1787000000000),
		v2("ses_v2", "", "", "Write a README", 1788256800000),
		v2("ses_sub", "ses_v2", "", "Explore (@explore subagent)", 1788256802000),
		v2("ses_fork", "", "ses_v2", "", 1788259999000),
		// The v1 rows of ses_mig, which 2.0 left in place, and a session
		// a 1.x opencode made after the migration (v1 tables only).
		"INSERT INTO session VALUES ('ses_mig', 'p1', NULL, NULL, 'slug', '/w/app', NULL, 'old title', '1.18.32', NULL, 0, NULL, 1787000000000, 1787000000000, NULL, NULL)",
		"INSERT INTO session VALUES ('ses_v1', 'p1', NULL, NULL, 'slug', '/w/old', NULL, 'Made by 1.18', '1.18.32', NULL, 0, NULL, 1789000000000, 1789000000000, NULL, NULL)",
		`INSERT INTO message VALUES ('msg_m1', 'ses_mig', 1787000001000, 1787000001000, '{"id":"msg_m1","sessionID":"ses_mig","role":"user","time":{"created":1787000001000}}')`,
		`INSERT INTO part VALUES ('prt_m1', 'msg_m1', 'ses_mig', 1787000001000, 1787000001000, '{"type":"text","text":"old question"}')`,
		`INSERT INTO message VALUES ('msg_v1', 'ses_v1', 1789000001000, 1789000001000, '{"id":"msg_v1","sessionID":"ses_v1","role":"user","time":{"created":1789000001000}}')`,
		`INSERT INTO part VALUES ('prt_v1', 'msg_v1', 'ses_v1', 1789000001000, 1789000001000, '{"type":"text","text":"from 1.18 after the upgrade"}')`,
	)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	seq := map[string]int{}
	for _, r := range rows20 {
		seq[r.session]++
		created := int64(0)
		if tm, ok := jsonl.Lookup([]byte(r.data), "time"); ok {
			if c, ok := jsonl.Lookup(tm, "created"); ok {
				f, _ := jsonl.Number(c)
				created = int64(f)
			}
		}
		if _, err := db.Exec(`INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)`, r.id, r.session, r.typ, seq[r.session], created, created, r.data); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

// TestOpencode20 reads an opencode 2.0 database: sessions from
// session_v2 (a migrated session once, from its v2 copy; a session only
// in the v1 tables from those), session_message rows of 2.0's shapes, a
// subagent and a fork (the messages it copied from its source left out).
func TestOpencode20(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := db20(t, dir)
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{Cwd: "/fallback"})
	if len(res.Damage) != 0 || len(res.Skipped) != 0 {
		t.Fatalf("damage %v, skipped %v", res.Damage, res.Skipped)
	}
	var ids []string
	for _, s := range res.Sessions {
		ids = append(ids, s.SourceID)
	}
	if diff := cmp.Diff([]string{"ses_mig", "ses_v2", "ses_sub", "ses_fork", "ses_v1"}, ids); diff != "" {
		t.Fatalf("sessions (-want +got):\n%s", diff)
	}

	mig := res.ByID(t, "ses_mig")
	if mig.Name != "Migrated" || mig.SourceVersion != "2.0.15" {
		t.Errorf("ses_mig read from %q %q, want its session_v2 row", mig.Name, mig.SourceVersion)
	}
	if diff := cmp.Diff([]importtest.Msg{{Role: "user", Text: "old question"}, {Role: "assistant", Text: "old answer"}}, importtest.Load(t, mig, "").Messages()); diff != "" {
		t.Errorf("ses_mig (-want +got):\n%s", diff)
	}
	v1 := res.ByID(t, "ses_v1")
	if v1.Cwd != "/w/old" || v1.Name != "Made by 1.18" {
		t.Errorf("ses_v1: cwd %q name %q", v1.Cwd, v1.Name)
	}

	s := res.ByID(t, "ses_v2")
	if s.SourcePath != db || !s.Start.Equal(time.UnixMilli(1788256800000).UTC()) || s.Cwd != "/w/app" {
		t.Errorf("ses_v2: path %s start %v cwd %q", s.SourcePath, s.Start, s.Cwd)
	}
	l := importtest.Load(t, s, "")
	want := []importtest.Msg{
		{Role: "compactionSummary", Text: "## Objective\nA README."},
		{Role: "user", Text: "thanks"},
		{Role: "assistant", Text: "Done."},
	}
	if diff := cmp.Diff(want, l.Messages()); diff != "" {
		t.Errorf("ses_v2 context (-want +got):\n%s", diff)
	}
	var full []importtest.Msg
	for _, e := range l.Index.Branch(l.Entries[len(l.Entries)-1].ID) {
		if m, ok := e.Field("message"); ok {
			full = append(full, importtest.Reduce(m))
		}
	}
	wantFull := []importtest.Msg{
		{Role: "user", Text: "add a README"},
		{Role: "assistant", Text: "Writing.", ToolCalls: []string{"call_1", "call_2", "call_3"}},
		{Role: "toolResult", Text: "Wrote file", ToolCallID: "call_1"},
		{Role: "toolResult", Text: "no such file", ToolCallID: "call_2"},
		{Role: "toolResult", Text: "(the tool did not finish)", ToolCallID: "call_3"},
		{Role: "user", Text: "thanks"},
		{Role: "assistant", Text: "Done."},
	}
	if diff := cmp.Diff(wantFull, full); diff != "" {
		t.Errorf("ses_v2 branch (-want +got):\n%s", diff)
	}
	file := string(s.Bytes(""))
	for _, frag := range []string{
		`"customType":"opencode-shell","content":"Shell command: ls\nREADME.md\n","display":true,"details":{"command":"ls","output":"README.md\n","exit":0}`,
		`"customType":"opencode-message","data":{"type":"compaction","data":{"time":{"created":1788256808000},"status":"failed"`,
		`"customType":"opencode-message","data":{"type":"idle"`,
		`"type":"model_change"`, `"provider":"openai","modelId":"gpt-5"`,
		`"arguments":{"command":"ls"}`,
		`"usage":{"input":30,"output":50,"cacheRead":500,"cacheWrite":100`,
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`,
		`"tokensBefore":580`,
	} {
		if !strings.Contains(file, frag) {
			t.Errorf("ses_v2 lacks %s", frag)
		}
	}

	sub := res.ByID(t, "ses_sub")
	if sub.ParentSourceID != "ses_v2" {
		t.Errorf("ses_sub parent %q", sub.ParentSourceID)
	}
	fork := res.ByID(t, "ses_fork")
	if fork.ParentSourceID != "ses_v2" {
		t.Errorf("ses_fork parent %q", fork.ParentSourceID)
	}
	lf := importtest.Load(t, fork, "/pi/parent.jsonl")
	if diff := cmp.Diff([]importtest.Msg{{Role: "user", Text: "make it shorter"}, {Role: "assistant", Text: "Shortened."}}, lf.Messages()); diff != "" {
		t.Errorf("ses_fork (-want +got):\n%s", diff)
	}
	if f := string(fork.Bytes("")); !strings.Contains(f, `"customType":"opencode-fork","data":{"forkedFrom":"ses_v2","parentHistory":"parent","copiedMessages":3}`) || strings.Contains(f, "add a README") {
		t.Errorf("ses_fork: the fork entry is missing or the copied messages were imported again")
	}
	importtest.CheckReimport(t, Source{}, dir, migrate.ImportOptions{Cwd: "/fallback"}, res)
}

// TestUnknownSchema: a database of opencode's name with neither a
// session nor a session_v2 table is reported, naming the tables it has,
// and not silently skipped.
func TestUnknownSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE `conversation_v3` (id text); CREATE TABLE `turn` (id text)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := Source{}.Open(t.Context(), dir, migrate.ImportOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var errs []error
	for _, err := range st.Sessions(t.Context()) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "conversation_v3, turn") || !strings.Contains(errs[0].Error(), "opencode.db") {
		t.Errorf("errors %v, want one naming the database and its tables", errs)
	}
}
