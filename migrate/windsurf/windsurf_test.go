package windsurf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

func TestCorpus(t *testing.T) {
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
