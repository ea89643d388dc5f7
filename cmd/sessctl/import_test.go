package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/internal/testenv"
)

// isolate points every store location at dir, so the machine's own
// stores are never read and pi's store is dir/pi.
func isolate(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("HOME", dir)
	t.Setenv("USERPROFILE", dir) // the home directory on Windows
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(dir, "pi"))
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "WINDSURF_SESSIONS_DIR", "OPENCODE_DB", "APPDATA", "GOOSE_PATH_ROOT", "CRUSH_GLOBAL_DATA", "LOCALAPPDATA"} {
		t.Setenv(k, "")
	}
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
}

type importDoc struct {
	Sessions []importer.ReportSession `json:"sessions"`
	Skipped  []importer.ReportSkip    `json:"skipped"`
	Damaged  []importer.ReportDamage  `json:"damaged"`
	Summary  importer.Summary         `json:"summary"`
}

func importJSON(t *testing.T, wantCode int, args ...string) importDoc {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"import", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("import %v: exit %d, want %d\n%s", args, code, wantCode, errOut)
	}
	var doc importDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("import %v: %v\n%s", args, err, out)
	}
	return doc
}

// TestImportCorpus imports every store of the foreign corpus through the
// CLI, opens each written file with the engine, runs 'sessctl verify' on
// it, checks subagents name their parent's file, and imports again to
// check that nothing changes.
func TestImportCorpus(t *testing.T) {
	corpus := testenv.Corpus(t, "foreign")
	tmp := t.TempDir()
	isolate(t, tmp)
	stores := []struct{ source, path string }{
		{"claude", "claude/flat-subagents-2.0.76/claude-home"},
		{"claude", "claude/flat-task-subagent-2.0.74/claude-home"},
		{"claude", "claude/hier-subagent-2.1.97/claude-home"},
		{"claude", "claude/compaction-slice-2.1.39/claude-home"},
		{"claude", "claude/summary-lines-2.0.24/claude-home"},
		{"codex", "codex/legacy-2025-09/codex-home"},
		{"codex", "codex/cli-0.98.0/codex-home"},
		{"gemini", "gemini/json-hashdir-2025-10/gemini-home"},
		{"gemini", "gemini/json-namedir-summary-2026-03/gemini-home"},
		{"gemini", "gemini/jsonl-2026-04/gemini-home"},
		{"cursor", "cursor/handmade-store-db/cursor-home"},
		{"windsurf", "windsurf/handmade-cascade-json/cascade"},
		{"agsh", "agsh/handmade-v0.1.0-schema/agsh-data"},
	}
	type written struct {
		line  importer.ReportSession
		mtime time.Time
	}
	var files []written
	for _, st := range stores {
		doc := importJSON(t, exitOK, st.source, filepath.Join(corpus, st.path), "--cwd", filepath.Join(tmp, "work"))
		if len(doc.Sessions) == 0 || doc.Summary.New != len(doc.Sessions) || len(doc.Damaged) > 0 {
			t.Errorf("%s: %+v", st.path, doc.Summary)
		}
		byID := map[string]importer.ReportSession{}
		for _, l := range doc.Sessions {
			byID[l.SourceID] = l
		}
		for _, l := range doc.Sessions {
			s, err := engine.OpenFile(context.Background(), l.File, engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatalf("%s: %v", l.File, err)
			}
			ctx := s.Context()
			h := s.Header()
			s.Close()
			if len(ctx.Messages) == 0 {
				t.Errorf("%s: empty context", l.File)
			}
			if strings.Contains(l.SourceID, "/") && byID[strings.SplitN(l.SourceID, "/", 2)[0]].File != "" {
				if want := byID[strings.SplitN(l.SourceID, "/", 2)[0]].File; h.ParentSession != want || l.ParentSession != want {
					t.Errorf("%s: parentSession %q, want %q", l.SourceID, h.ParentSession, want)
				}
			}
			if _, errOut, code := runCLI(t, "verify", l.File); code != exitOK {
				t.Errorf("verify %s: exit %d\n%s", l.File, code, errOut)
			}
			fi, err := os.Stat(l.File)
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v", l.File, fi.Mode().Perm())
			}
			files = append(files, written{l, fi.ModTime()})
		}
	}
	// Importing again changes nothing and writes nothing.
	for _, st := range stores {
		doc := importJSON(t, exitOK, st.source, filepath.Join(corpus, st.path), "--cwd", filepath.Join(tmp, "work"))
		if doc.Summary.Unchanged != len(doc.Sessions) {
			t.Errorf("re-import of %s: %+v", st.path, doc.Summary)
		}
	}
	for _, w := range files {
		fi, err := os.Stat(w.line.File)
		if err != nil || !fi.ModTime().Equal(w.mtime) {
			t.Errorf("%s was rewritten by the re-import", w.line.File)
		}
	}
}

// TestImportAll: --all finds the stores its environment names, and says so
// plainly when there are none.
func TestImportAll(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	out, errOut, code := runCLI(t, "import", "--all", "--dry-run")
	if code != exitOK || !strings.Contains(out, "No sessions to import: none of Claude Code, Codex, Gemini CLI, Cursor, Windsurf, opencode, agsh, Goose, Crush keeps a store on this machine.") || errOut != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, filepath.Join(tmp, ".claude")) {
		t.Errorf("the places looked in are not listed:\n%s", out)
	}

	corpus := testenv.Corpus(t, "foreign")
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(corpus, "claude", "hier-subagent-2.1.97", "claude-home"))
	t.Setenv("WINDSURF_SESSIONS_DIR", filepath.Join(corpus, "windsurf", "handmade-cascade-json", "cascade"))
	out, _, code = runCLI(t, "import", "--all", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would import 3 sessions from 2 stores: 3 new") || !strings.Contains(out, "(dry run: nothing written)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "pi")); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote into pi's store: %v", err)
	}
	out, _, code = runCLI(t, "import", "--all")
	if code != exitOK || !strings.Contains(out, "imported 3 sessions from 2 stores: 3 new, 0 updated, 0 unchanged") {
		t.Errorf("exit %d\n%s", code, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[:3] {
		if f := strings.Fields(l); len(f) < 6 || f[2] != "new" || !strings.HasPrefix(f[5], filepath.Join(tmp, "pi", "sessions")) {
			t.Errorf("line %q", l)
		}
	}
}

// TestImportKeepsChangedFiles: a session continued in pi after its import
// is not overwritten by the next import.
func TestImportKeepsChangedFiles(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	conv := filepath.Join(tmp, "cascade", "c1.json")
	if err := os.MkdirAll(filepath.Dir(conv), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		data := `{"conversationId":"c1","cwd":"/w","createdAt":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"` + text + `"}]}`
		if err := os.WriteFile(conv, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	doc := importJSON(t, exitOK, "windsurf", filepath.Dir(conv))
	file := doc.Sessions[0].File
	write("one, edited")
	if doc := importJSON(t, exitOK, "windsurf", filepath.Dir(conv)); doc.Sessions[0].Status != "updated" || doc.Sessions[0].File != file {
		t.Fatalf("source changed: %+v", doc.Sessions[0])
	}
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), file, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(rawMessage(`{"role":"user","content":"continued in pi","timestamp":1}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, _ := os.ReadFile(file)
	write("one, edited again")
	out, errOut, code := runCLI(t, "import", "windsurf", filepath.Dir(conv))
	if code != exitOK || !strings.Contains(out, " kept ") || !strings.Contains(errOut, "changed after it was imported") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("a session continued in pi was overwritten")
	}
}

// TestImportDamaged: a damaged line is reported with its path and line,
// the rest is imported, and the exit status is 4.
func TestImportDamaged(t *testing.T) {
	tmp := t.TempDir()
	isolate(t, tmp)
	file := filepath.Join(tmp, "claude", "projects", "-w", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessi
{"type":"assistant","uuid":"a2","parentUuid":"u1","sessionId":"s1","cwd":"/w","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m","role":"assistant","model":"x","content":[{"type":"text","text":"hello"}]}}
`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "import", "claude", filepath.Join(tmp, "claude"))
	if code != exitCorrupt || !strings.Contains(errOut, file+":2: ") || !strings.Contains(out, "claude   s1 ") || !strings.Contains(out, "1 damaged") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestImportUsage(t *testing.T) {
	notFoundMsg := "no such file"
	if runtime.GOOS == "windows" {
		notFoundMsg = "nothing: " // the system's words differ (wine: "File not found.")
	}
	tmp := t.TempDir()
	isolate(t, tmp)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"import"}, exitUsage, "expected SOURCE"},
		{[]string{"import", "vscode"}, exitUsage, `unknown source "vscode"`},
		{[]string{"import", "--all", "claude"}, exitUsage, "--all takes no SOURCE"},
		{[]string{"import", "codex"}, exitNotFound, "no Codex store found"},
		{[]string{"import", "codex", filepath.Join(tmp, "nothing")}, exitFailure, notFoundMsg},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) || !strings.HasPrefix(errOut, "sessctl: import: ") {
			t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, out, errOut)
		}
	}
}
