package sources

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
	_ "modernc.org/sqlite"
)

// TestDetect checks that each corpus store is recognised by its own
// importer only.
func TestDetect(t *testing.T) {
	t.Parallel()
	root := importtest.Corpus(t)
	stores := map[string]string{
		"claude":   "claude/hier-subagent-2.1.97/claude-home",
		"codex":    "codex/cli-0.98.0/codex-home",
		"gemini":   "gemini/jsonl-2026-04/gemini-home",
		"cursor":   "cursor/handmade-store-db/cursor-home",
		"windsurf": "windsurf/handmade-cascade-json/cascade",
		"agsh":     "agsh/handmade-v0.1.0-schema/agsh-data",
	}
	for name, dir := range stores {
		for _, src := range All() {
			got := src.Detect(filepath.Join(root, dir))
			if got != (src.Name() == name) {
				t.Errorf("%s.Detect(%s) = %v", src.Name(), dir, got)
			}
		}
	}
	if _, ok := ByName("opencode"); !ok {
		t.Error("no opencode")
	}
	for _, src := range All() {
		if len(src.Locations(migrate.Locator{Home: "/h", GOOS: "linux"})) == 0 {
			t.Errorf("%s has no default location", src.Name())
		}
	}
}

// TestDetectSQLiteStores: the stores that are SQLite databases of the
// same file name (agsh's and Goose's sessions.db) or of similar tables
// are each recognised by their own importer only.
func TestDetectSQLiteStores(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	mk := func(path string, stmts ...string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Dir(path)
	}
	stores := map[string]string{
		"goose": mk(filepath.Join(tmp, "goose", "sessions", "sessions.db"),
			`CREATE TABLE schema_version (version INTEGER PRIMARY KEY)`, `INSERT INTO schema_version VALUES (17)`,
			`CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT)`, `CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content_json TEXT, created_timestamp INTEGER)`),
		"agsh": mk(filepath.Join(tmp, "agsh", "sessions.db"),
			`CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT, metadata TEXT)`, `CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT)`),
		"crush": mk(filepath.Join(tmp, "proj", ".crush", "crush.db"),
			`CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY, version_id INTEGER, is_applied INTEGER)`,
			`CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, created_at INTEGER)`, `CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, parts TEXT, created_at INTEGER)`),
	}
	for name, dir := range stores {
		for _, src := range All() {
			if got := src.Detect(dir); got != (src.Name() == name) {
				t.Errorf("%s.Detect(%s store) = %v", src.Name(), name, got)
			}
		}
	}
}
