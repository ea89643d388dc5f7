package windsurf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

func TestCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(importtest.Corpus(t, "windsurf"), "handmade-cascade-json", "cascade")
	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, dir, opts)
	if len(res.Damage) > 0 || len(res.Sessions) != 1 {
		t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
	}
	s := res.ByID(t, "6d0f3a52-91c4-4b8e-a7d2-3e5f1c9b0a47")
	if s.Cwd != "/home/user/projects/invoicer" || !s.CwdKnown || s.Name != "Fix flaky date test" {
		t.Errorf("cwd %q name %q", s.Cwd, s.Name)
	}
	got := importtest.Load(t, s, "").Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "test_due_date fails only after 23:00, can you fix it?"},
		{Role: "assistant", Text: "The test builds the expected date with `date.today()` but the code under test uses UTC. I'll make both use UTC."},
		{Role: "custom", Text: "edit_file invoicer/tests/test_dates.py: 1 hunk applied", CustomType: "windsurf-tool"},
		{Role: "assistant", Text: "Changed the test to `datetime.now(timezone.utc).date()`.\nRun `pytest tests/test_dates.py` to confirm."},
		{Role: "custom", Text: "Cascade memory updated", CustomType: "windsurf-system"},
		{Role: "user", Text: "works, thanks"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	importtest.CheckReimport(t, Source{}, dir, opts, res)
}

func TestLocations(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", nil, "/h/.config/Windsurf/User/globalStorage/codeium.windsurf/cascade"},
		{"darwin", nil, "/h/Library/Application Support/Windsurf/User/globalStorage/codeium.windsurf/cascade"},
		{"windows", map[string]string{"APPDATA": "/appdata"}, "/appdata/Windsurf/User/globalStorage/codeium.windsurf/cascade"},
		{"linux", map[string]string{"WINDSURF_SESSIONS_DIR": "/ws"}, "/ws"},
	}
	for _, c := range cases {
		got := Source{}.Locations(migrate.Locator{Getenv: env(c.env), Home: "/h", GOOS: c.goos})
		if len(got) != 1 || filepath.ToSlash(got[0]) != c.want {
			t.Errorf("%s %v: %v, want %s", c.goos, c.env, got, c.want)
		}
	}
}

func TestDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"x\"},,\n  ]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Source{}.Open(t.Context(), dir, migrate.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for ref := range st.Sessions(t.Context()) {
		_, err := st.Convert(t.Context(), ref)
		d, ok := err.(*migrate.Damage)
		if !ok || d.Path != bad || d.Line != 3 {
			t.Errorf("error %v, want damage at %s:3", err, bad)
		}
	}
}

// TestInvalidUTF8: a message holding bytes that are not UTF-8 is damaged
// (reported with its file and position), never imported with them
// replaced by U+FFFD; the other messages are imported.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	doc := "{\"conversationId\": \"s\", \"cwd\": \"/w\", \"messages\": [\n" +
		"  {\"role\": \"user\", \"content\": \"first\", \"timestamp\": 1770112800000},\n" +
		"  {\"role\": \"assistant\", \"content\": \"bad \xff here\", \"timestamp\": 1770112801000},\n" +
		"  {\"role\": \"assistant\", \"content\": \"third\", \"timestamp\": 1770112802000}\n]}\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != file || res.Damage[0].Pos != "message 2" || !errors.Is(res.Damage[0], migrate.ErrInvalidUTF8) {
		t.Fatalf("damage %v, want %s message 2, not valid UTF-8", res.Damage, file)
	}
	got := importtest.Load(t, res.ByID(t, "s"), "").Messages()
	want := []importtest.Msg{{Role: "user", Text: "first"}, {Role: "assistant", Text: "third"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
}

// TestDates imports a copy of testdata/dates, every file's modification
// time set to one known time: the sessions take the dates their files
// hold, and only the file without any is dated by its mtime and says so.
func TestDates(t *testing.T) {
	t.Parallel()
	src := filepath.Join("testdata", "dates", "cascade")
	dir := t.TempDir()
	mtime := time.Date(2026, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	files, _ := filepath.Glob(filepath.Join(src, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dst, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) > 0 || len(res.Sessions) != 4 {
		t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
	}
	cases := []struct {
		id       string
		start    string
		fromFile bool
		model    string
	}{
		{"1-created", "2026-02-03T10:00:00.000Z", false, "swe-1.5"},
		{"2-message-dates", "2026-02-03T10:00:00.000Z", false, migrate.UnknownModel},
		{"3-updated", "2026-02-04T08:30:00.000Z", false, migrate.UnknownModel},
		{"4-no-date", "2026-05-06T07:08:09.123Z", true, migrate.UnknownModel},
	}
	for _, c := range cases {
		s := res.ByID(t, c.id)
		if got := s.Start.UTC().Format("2006-01-02T15:04:05.000Z"); got != c.start || s.DateFromFile != c.fromFile {
			t.Errorf("%s: start %s (from file %v), want %s (%v)", c.id, got, s.DateFromFile, c.start, c.fromFile)
		}
		l := importtest.Load(t, s, "")
		rec, ok := migrate.ReadImportRecord(&l.Entries[1])
		if !ok || rec.DateFromFile() != c.fromFile {
			t.Errorf("%s: provenance %s", c.id, l.Entries[1].Raw)
		}
		if f := string(s.Bytes("")); !strings.Contains(f, `"provider":"windsurf","model":"`+c.model+`"`) {
			t.Errorf("%s: model is not %q:\n%s", c.id, c.model, f)
		}
	}
	// Message times: their own, else the one before.
	f := string(res.ByID(t, "2-message-dates").Bytes(""))
	if !strings.Contains(f, `"timestamp":"2026-02-03T10:00:30.000Z","message":{"role":"assistant"`) {
		t.Errorf("message dates:\n%s", f)
	}
	if f := string(res.ByID(t, "4-no-date").Bytes("")); !strings.Contains(f, `"dateFrom":"mtime"`) {
		t.Errorf("no dateFrom in the provenance entry:\n%s", f)
	}
	importtest.CheckReimport(t, Source{}, dir, migrate.ImportOptions{}, res)
}
