package goose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// TestOrphanMessages: messages rows whose session is not in the sessions
// table cannot be imported; they are reported as damage naming the
// database and the session they name, one report for each such session,
// and the rest is imported (issue 39, item 14: they were dropped without a
// word).
func TestOrphanMessages(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	db := gooseDB(t, dir,
		"INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('gone_1', 'user', '[{\"type\":\"text\",\"text\":\"lost?\"}]', "+itoa(int(t0)+40)+")",
		"INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('gone_1', 'assistant', '[{\"type\":\"text\",\"text\":\"no\"}]', "+itoa(int(t0)+41)+")")
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Sessions) != 2 {
		t.Errorf("%d sessions, want 2", len(res.Sessions))
	}
	if len(res.Damage) != 1 || res.Damage[0].Path != db || !strings.Contains(res.Damage[0].Pos, "gone_1") || !strings.Contains(res.Damage[0].Error(), "2 messages") {
		t.Fatalf("damage %v; want the 2 messages of session gone_1 in %s", res.Damage, db)
	}
}

// TestRelativeWorkingDir: a working_dir that is not an absolute path
// (../../../etc) is not taken as the session's cwd, in the database or in
// a legacy file: the session gets the fallback cwd, CwdKnown false, and
// the field is reported as damage naming where it is.
func TestRelativeWorkingDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	db := gooseDB(t, dir, `UPDATE sessions SET working_dir = '../../../etc' WHERE id = '20260512_1'`)
	file := filepath.Join(dir, "20250101_120000.jsonl")
	lines := `{"working_dir":"etc/x","description":"Old","message_count":2}` + "\n" +
		`{"role":"user","created":1735732800,"content":[{"type":"text","text":"hi"}]}` + "\n" +
		`{"role":"assistant","created":1735732801,"content":[{"type":"text","text":"hello"}]}` + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{Cwd: "/fallback"})
	for _, id := range []string{"20260512_1", "20250101_120000"} {
		s := res.ByID(t, id)
		if s.Cwd != "/fallback" || s.CwdKnown {
			t.Errorf("%s: cwd %q (known %v), want the fallback", id, s.Cwd, s.CwdKnown)
		}
	}
	if s := res.ByID(t, "20260512_2"); s.Cwd != "/w/app" || !s.CwdKnown {
		t.Errorf("an absolute working_dir: cwd %q (known %v)", s.Cwd, s.CwdKnown)
	}
	found := map[string]bool{}
	for _, d := range res.Damage {
		switch {
		case d.Path == db && strings.Contains(d.Pos, "20260512_1") && strings.Contains(d.Error(), "../../../etc"):
			found["db"] = true
		case d.Path == file && d.Line == 1 && strings.Contains(d.Error(), "etc/x"):
			found["file"] = true
		default:
			t.Errorf("unexpected damage %v", d)
		}
	}
	if !found["db"] || !found["file"] {
		t.Errorf("damage %v; want the working_dir of %s's row 20260512_1 and of %s line 1", res.Damage, db, file)
	}
}
