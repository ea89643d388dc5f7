package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/importer"
)

// repoPath returns a path inside the repository, from the test's
// directory (cmd/sessctl).
func repoPath(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

// TestImportOpencodeReal imports the store the real opencode 1.18.33
// wrote (migrate/opencode/testdata/real-1.18.33): every session, the
// subagent as a child of its parent's file, each file verified and
// opened with a context, and a second import that changes nothing.
func TestImportOpencodeReal(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	store, err := filepath.Abs(repoPath("migrate", "opencode", "testdata", "real-1.18.33", "opencode-data"))
	if err != nil {
		t.Fatal(err)
	}
	doc := importJSON(t, exitOK, "opencode", store)
	if doc.Summary.Sessions != 8 || doc.Summary.New != 8 || doc.Summary.Skipped != 0 || len(doc.Damaged) != 0 {
		t.Fatalf("summary %+v", doc.Summary)
	}
	files := map[string]string{}
	for _, l := range doc.Sessions {
		files[l.SourceID] = l.File
	}
	children := 0
	for _, l := range doc.Sessions {
		if _, errOut, code := runCLI(t, "verify", l.File); code != exitOK {
			t.Errorf("verify %s: exit %d\n%s", l.File, code, errOut)
		}
		s, err := engine.OpenFile(context.Background(), l.File, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		n, h := len(s.Context().Messages), s.Header()
		s.Close()
		if n == 0 {
			t.Errorf("%s: empty context", l.File)
		}
		if l.ParentSession != "" {
			children++
			if h.ParentSession != l.ParentSession || !strings.HasSuffix(l.ParentSession, ".jsonl") {
				t.Errorf("%s: parentSession %q (line %q)", l.SourceID, h.ParentSession, l.ParentSession)
			}
		}
		if l.Cwd != "/home/user/work/app" || !l.CwdFromSource {
			t.Errorf("%s: cwd %q", l.SourceID, l.Cwd)
		}
	}
	if children != 1 {
		t.Errorf("%d child sessions, want 1", children)
	}
	again := importJSON(t, exitOK, "opencode", store)
	if again.Summary.Unchanged != 8 {
		t.Errorf("re-import: %+v", again.Summary)
	}
}

// TestImportReportsSkipped: a source session with nothing to import is
// listed as skipped with its reason, in the table, the summary and the
// JSON, and the import still succeeds.
func TestImportReportsSkipped(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	dir := filepath.Join(tmp, "cascade")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"empty.json": `{"conversationId":"empty","cwd":"/w","createdAt":"2026-01-01T00:00:00Z","messages":[]}`,
		"full.json":  `{"conversationId":"full","cwd":"/w","createdAt":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"hi"}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "import", "windsurf", dir)
	if code != exitOK || !strings.Contains(out, "windsurf empty                                skipped   no messages  "+filepath.Join(dir, "empty.json")) ||
		!strings.Contains(out, "1 new, 0 updated, 0 unchanged, 1 skipped (nothing to import)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	doc := importJSON(t, exitOK, "windsurf", dir)
	want := []importer.ReportSkip{{Source: "windsurf", SourceID: "empty", SourcePath: filepath.Join(dir, "empty.json"), Reason: "no messages"}}
	if diff := cmp.Diff(want, doc.Skipped); diff != "" || doc.Summary.Skipped != 1 {
		t.Errorf("skipped (-want +got):\n%s\nsummary %+v", diff, doc.Summary)
	}
}

// TestImportFileDates: a session whose source holds no date is dated by
// the source file's mtime, and list and show say so; the others are not
// marked.
func TestImportFileDates(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	dir := filepath.Join(tmp, "cascade")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := repoPath("migrate", "windsurf", "testdata", "dates", "cascade")
	for _, name := range []string{"1-created.json", "4-no-date.json"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mtime := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "4-no-date.json"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	doc := importJSON(t, exitOK, "windsurf", dir)
	ids := map[string]string{}
	for _, l := range doc.Sessions {
		ids[l.SourceID] = l.ID
	}
	out, errOut, code := runCLI(t, "list", "--cwd", "/home/user/app")
	if code != exitOK {
		t.Fatalf("list: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[3], "the imported session's source records no date: its file's modification time stands in") {
		t.Fatalf("list:\n%s", out)
	}
	for _, l := range lines[1:3] {
		marked := strings.Contains(l, "* ")
		if noDate := strings.Contains(l, "No date at all"); marked != noDate {
			t.Errorf("list row marked %v: %q", marked, l)
		}
	}
	out, _, _ = runCLI(t, "list", "--cwd", "/home/user/app", "--json")
	var infos []map[string]any
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, in := range infos {
		if _, marked := in["dateFromFile"]; marked != (in["id"] == ids["4-no-date"]) {
			t.Errorf("list --json: %v", in)
		}
	}
	for id, want := range map[string]bool{ids["4-no-date"]: true, ids["1-created"]: false} {
		out, errOut, code := runCLI(t, "show", id)
		if code != exitOK {
			t.Fatalf("show: exit %d\n%s", code, errOut)
		}
		if got := strings.Contains(out, "Created  2026-05-06 07:08:09\n         (the imported session's source records no date"); got != want {
			t.Errorf("show %s:\n%s", id, out)
		}
	}
}

// TestImportHistory: --history adds the prompt-only sessions of
// history.jsonl, marked as such, and is refused for other sources.
func TestImportHistory(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	home, err := filepath.Abs(repoPath("migrate", "claude", "testdata", "history", "claude-home"))
	if err != nil {
		t.Fatal(err)
	}
	doc := importJSON(t, exitOK, "claude", home)
	if doc.Summary.Sessions != 1 || doc.Summary.Skipped != 0 {
		t.Errorf("without --history: %+v", doc.Summary)
	}
	doc = importJSON(t, exitCorrupt, "claude", home, "--history")
	if doc.Summary.Sessions != 3 || doc.Summary.Unchanged != 1 || doc.Summary.New != 2 || doc.Summary.Skipped != 1 || doc.Summary.Damaged != 1 {
		t.Errorf("with --history: %+v", doc.Summary)
	}
	for _, l := range doc.Sessions {
		if l.SourceID != "c0ffee00-1111-4222-8333-444455556666" {
			continue
		}
		data, err := os.ReadFile(l.File)
		if err != nil || !strings.Contains(string(data), `"promptOnly":true`) || l.Cwd != "/home/user/app" {
			t.Errorf("%s: not a prompt-only session in /home/user/app (%v):\n%s", l.File, err, data)
		}
		if _, errOut, code := runCLI(t, "verify", l.File); code != exitOK {
			t.Errorf("verify: %s", errOut)
		}
	}
	if _, errOut, code := runCLI(t, "import", "codex", "--history", home); code != exitUsage || !strings.Contains(errOut, "--history is for claude only") {
		t.Errorf("--history with codex: exit %d\n%s", code, errOut)
	}
}

// copyTree copies a directory of test data into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReimportChangedSource: after a source gains a message, a re-import
// rewrites only that session, and only by adding to it: every line it
// had (but the provenance entry, whose digest changes) is still there,
// byte for byte; the other sessions are left alone.
func TestReimportChangedSource(t *testing.T) {
	cases := []struct {
		source, data string
		changed      string // the source id of the session that changes
		sql          string // what changes it
	}{
		{"opencode", "migrate/opencode/testdata/real-1.18.33/opencode-data", "",
			`INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data)
			 SELECT 'msg_zz_new', session_id, 'user', max(seq) + 1, max(time_created) + 1000, max(time_created) + 1000,
			        '{"time":{"created":' || (max(time_created) + 1000) || '},"text":"one more question"}' FROM session_message`},
		{"agsh", "migrate/agsh/testdata/recipe-0.11/agsh-data", "9b2f6a1e-4c3d-4e5f-8a7b-1c2d3e4f5a60",
			`INSERT INTO messages (session_id, role, content, created_at) VALUES ('9b2f6a1e-4c3d-4e5f-8a7b-1c2d3e4f5a60', 'user',
			 '<context>
[Environment context]
Working directory: /home/user/work/site/docs
Date: Fri, 17 Apr 2026 10:09:00 +0200
</context>

one more question', '2026-04-17T08:09:00.000000000+00:00')`},
	}
	for _, c := range cases {
		t.Run(c.source, func(t *testing.T) {
			tmp := t.TempDir()
			isolate(t, tmp)
			store := filepath.Join(tmp, "store")
			copyTree(t, repoPath(strings.Split(c.data, "/")...), store)
			first := importJSON(t, exitOK, c.source, store, "--cwd", filepath.Join(tmp, "work"))
			before := map[string][]byte{}
			for _, l := range first.Sessions {
				data, err := os.ReadFile(l.File)
				if err != nil {
					t.Fatal(err)
				}
				before[l.SourceID] = data
			}
			dbFile := filepath.Join(store, "sessions.db")
			if c.source == "opencode" {
				dbFile = filepath.Join(store, "opencode.db")
			}
			db, err := sql.Open("sqlite", dbFile)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			if c.changed == "" {
				if err := db.QueryRow(`SELECT session_id FROM session_message WHERE id = 'msg_zz_new'`).Scan(&c.changed); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			again := importJSON(t, exitOK, c.source, store, "--cwd", filepath.Join(tmp, "work"))
			if again.Summary.Updated != 1 || again.Summary.Unchanged != len(first.Sessions)-1 {
				t.Errorf("re-import: %+v", again.Summary)
			}
			for _, l := range again.Sessions {
				after, err := os.ReadFile(l.File)
				if err != nil {
					t.Fatal(err)
				}
				if l.SourceID != c.changed {
					if string(after) != string(before[l.SourceID]) {
						t.Errorf("%s changed", l.SourceID)
					}
					continue
				}
				old := strings.Split(strings.TrimSuffix(string(before[l.SourceID]), "\n"), "\n")
				now := strings.Split(strings.TrimSuffix(string(after), "\n"), "\n")
				if len(now) <= len(old) || now[0] != old[0] {
					t.Fatalf("%s: %d lines after, %d before", l.SourceID, len(now), len(old))
				}
				have := map[string]bool{}
				for _, line := range now {
					have[line] = true
				}
				for _, line := range old[2:] {
					if !have[line] {
						t.Errorf("%s: line lost or changed by the re-import: %s", l.SourceID, line)
					}
				}
				if !strings.Contains(now[len(now)-1], "one more question") {
					t.Errorf("%s: new message is not the leaf: %s", l.SourceID, now[len(now)-1])
				}
			}
		})
	}
}

// TestImportAllNewSources: 'import --all --dry-run' finds a Goose store
// and a Crush store where those agents keep them by default (the XDG data
// directory; Crush's projects.json naming each project's .crush) and a
// compressed Codex rollout, lists their sessions, and writes nothing;
// the real import then files a Goose subagent under its parent's file.
func TestImportAllNewSources(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	xdg := filepath.Join(tmp, "xdg")
	exec := func(db *sql.DB, stmts ...string) {
		t.Helper()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	open := func(path string) *sql.DB {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	// Goose: the tables of its schema v17 that hold sessions, a parent
	// and its subagent, where Goose keeps them (on Windows under
	// %APPDATA%, elsewhere under the XDG data directory).
	gooseDir := filepath.Join(xdg, "goose", "sessions")
	if runtime.GOOS == "windows" {
		app := filepath.Join(tmp, "appdata")
		t.Setenv("APPDATA", app)
		gooseDir = filepath.Join(app, "Block", "goose", "data", "sessions")
	}
	g := open(filepath.Join(gooseDir, "sessions.db"))
	exec(g, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
		`INSERT INTO schema_version (version) VALUES (17)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, provider_name TEXT, model_config_json TEXT, parent_session_id TEXT)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL, role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, metadata_json TEXT)`,
		`INSERT INTO sessions (id, name, working_dir, created_at) VALUES ('20260512_1', 'goose parent', '/w/goose', '2026-05-12 09:00:00')`,
		`INSERT INTO sessions (id, name, session_type, working_dir, created_at, parent_session_id) VALUES ('20260512_2', 'goose child', 'sub_agent', '/w/goose', '2026-05-12 09:01:00', '20260512_1')`,
		`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20260512_1', 'user', '[{"type":"text","text":"hi goose"}]', 1778576401)`,
		`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20260512_2', 'user', '[{"type":"text","text":"sub task"}]', 1778576461)`)
	g.Close()
	// Crush: a project's .crush/crush.db, listed in projects.json.
	proj := filepath.Join(tmp, "proj")
	c := open(filepath.Join(proj, ".crush", "crush.db"))
	exec(c, `CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))`,
		`INSERT INTO goose_db_version (version_id, is_applied) VALUES (20260127000000, 1)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0, updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT)`,
		`CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL)`,
		`INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('ses_c', 'crush session', 1780308000, 1780308000)`,
		`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('m1', 'ses_c', 'user', '[{"type":"text","data":{"text":"hi crush"}}]', 1780308001, 1780308001)`)
	c.Close()
	list := `{"projects":[{"path":` + strconv.Quote(proj) + `,"data_dir":` + strconv.Quote(filepath.Join(proj, ".crush")) + `}]}`
	if err := os.MkdirAll(filepath.Join(xdg, "crush"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "crush", "projects.json"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	// Codex: one rollout, compressed.
	rollout := `{"timestamp":"2026-03-01T08:00:00.000Z","type":"session_meta","payload":{"id":"0195a1f0-0000-7000-8000-00000000000c","timestamp":"2026-03-01T08:00:00.000Z","cwd":"/w/codex"}}` + "\n" +
		`{"timestamp":"2026-03-01T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi codex"}]}}` + "\n"
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(rollout))
	enc.Close()
	codexHome := filepath.Join(tmp, "codex")
	zst := filepath.Join(codexHome, "sessions", "2026", "03", "01", "rollout-2026-03-01T09-00-00-0195a1f0-0000-7000-8000-00000000000c.jsonl.zst")
	if err := os.MkdirAll(filepath.Dir(zst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zst, z.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", codexHome)

	out, errOut, code := runCLI(t, "import", "--all", "--dry-run")
	if code != exitOK || errOut != "" || !strings.Contains(out, "would import 4 sessions from 3 stores: 4 new") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"codex    0195a1f0-0000-7000-8000-00000000000c", "goose    20260512_1", "goose    20260512_2", "crush    ses_c"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not list %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "pi")); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote into pi's store: %v", err)
	}
	doc := importJSON(t, exitOK, "--all")
	files := map[string]importer.ReportSession{}
	for _, l := range doc.Sessions {
		files[l.SourceID] = l
	}
	if child, parent := files["20260512_2"], files["20260512_1"]; child.ParentSession == "" || child.ParentSession != parent.File {
		t.Errorf("the Goose subagent's parentSession %q, want %q", child.ParentSession, parent.File)
	}
	if l := files["ses_c"]; l.Cwd != proj || !l.CwdFromSource {
		t.Errorf("the Crush session's cwd %q, want its project %s", l.Cwd, proj)
	}
	if l := files["0195a1f0-0000-7000-8000-00000000000c"]; l.SourcePath != zst || l.Cwd != "/w/codex" {
		t.Errorf("codex: %+v", l)
	}
	for _, l := range doc.Sessions {
		if _, errOut, code := runCLI(t, "verify", l.File); code != exitOK {
			t.Errorf("verify %s: exit %d\n%s", l.File, code, errOut)
		}
	}
}
