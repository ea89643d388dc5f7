package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
)

// line helpers: raw session lines, as pi writes them.
func header(id, cwd, ts string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`, id, ts, cwd)
}

func entry(typ, id, parent, ts, rest string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":%q,"id":%q,"parentId":%s,"timestamp":%q,%s}`, typ, id, p, ts, rest)
}

func msg(id, parent, ts, message string) string {
	return entry("message", id, parent, ts, `"message":`+message)
}

// fixture1 is a session with every kind of indexed text.
var fixture1 = []string{
	header("s1-0000", "/home/dev/app", "2026-03-01T09:00:00.000Z"),
	msg("u1", "", "2026-03-01T09:00:01.000Z", `{"role":"user","content":"the flaky migration test fails","timestamp":1}`),
	msg("a1", "u1", "2026-03-01T09:00:02.000Z", `{"role":"assistant","content":[{"type":"thinking","thinking":"consider the database lock"},{"type":"text","text":"the migration races the lock"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"go test ./migrate -run Flaky"}}],"provider":"p","model":"m","timestamp":2}`),
	msg("r1", "a1", "2026-03-01T09:00:03.000Z", `{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"FAIL TestFlaky timeout\nline two"}],"isError":true,"timestamp":3}`),
	msg("b1", "r1", "2026-03-01T09:00:04.000Z", `{"role":"bashExecution","command":"make lint","output":"lint clean","exitCode":0,"cancelled":false,"truncated":false,"timestamp":4}`),
	entry("custom_message", "c1", "b1", "2026-03-01T09:00:05.000Z", `"customType":"note","content":"remember quokka","display":true`),
	entry("compaction", "k1", "c1", "2026-03-01T09:00:06.000Z", `"summary":"summary mentions narwhal","firstKeptEntryId":"u1","tokensBefore":10`),
	entry("branch_summary", "s1", "k1", "2026-03-01T09:00:07.000Z", `"fromId":"k1","summary":"abandoned axolotl approach"`),
	entry("label", "l1", "s1", "2026-03-01T09:00:08.000Z", `"targetId":"a1","label":"rootcause"`),
	entry("session_info", "n1", "l1", "2026-03-01T09:00:09.000Z", `"name":"Wombat session"`),
	entry("custom", "x1", "n1", "2026-03-01T09:00:10.000Z", `"customType":"state","data":{"secret":"notindexed"}`),
}

var fixture2 = []string{
	header("s2-0000", "/home/dev/other", "2026-03-05T10:00:00.000Z"),
	msg("u2", "", "2026-03-05T10:00:01.000Z", `{"role":"user","content":[{"type":"text","text":"flaky network in the other project"},{"type":"image","data":"flakyBASE64","mimeType":"image/png"}],"timestamp":5}`),
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// fixtureStore writes the two fixture sessions into a store directory
// (the second in a subdirectory, as pi keeps one per cwd).
func fixtureStore(t *testing.T) (root, s1, s2 string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "sessions")
	s1 = filepath.Join(root, "--home-dev-app--", "2026-03-01T09-00-00-000Z_s1-0000.jsonl")
	s2 = filepath.Join(root, "--home-dev-other--", "2026-03-05T10-00-00-000Z_s2-0000.jsonl")
	writeLines(t, s1, fixture1)
	writeLines(t, s2, fixture2)
	return root, s1, s2
}

// searchAll runs a query and returns its hits as "entry kind" strings.
func searchAll(t *testing.T, x *Index, q Query) []string {
	t.Helper()
	hits, err := collect(x, q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Entry+" "+h.Kind.String())
	}
	return out
}

func collect(x *Index, q Query) ([]Hit, error) {
	var hits []Hit
	for h, err := range x.Search(context.Background(), q) {
		if err != nil {
			return hits, err
		}
		hits = append(hits, h)
	}
	return hits, nil
}

func openIndex(t *testing.T, o Options) *Index {
	t.Helper()
	if o.Dir == "" && !o.NoIndex {
		o.Dir = filepath.Join(t.TempDir(), "index")
	}
	x, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Error(err)
		}
	})
	return x
}

func TestSearchTexts(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	since := time.Date(2026, 3, 1, 9, 0, 3, 0, time.UTC)
	cases := []struct {
		name string
		q    Query
		want []string
	}{
		{"word, newest first", Query{Text: "flaky"}, []string{"u2 user", "a1 toolCall", "u1 user"}},
		{"case and prefix", Query{Text: "MIGRAT*"}, []string{"a1 text", "a1 toolCall", "u1 user"}},
		{"phrase", Query{Text: `"migration races"`}, []string{"a1 text"}},
		{"phrase in order only", Query{Text: `"races migration"`}, []string{}},
		{"boolean", Query{Text: "lock NOT races"}, []string{"a1 thinking"}},
		{"or", Query{Text: "quokka OR narwhal OR axolotl"}, []string{"s1 branchSummary", "k1 compaction", "c1 custom"}},
		{"near", Query{Text: "NEAR(flaky fails, 3)"}, []string{"u1 user"}},
		{"tool name", Query{Text: "bash"}, []string{"a1 toolCall"}},
		{"tool result", Query{Text: "timeout"}, []string{"r1 toolResult"}},
		{"bash execution", Query{Text: "lint"}, []string{"b1 bash"}},
		{"label", Query{Text: "rootcause"}, []string{"l1 label"}},
		{"session name", Query{Text: "wombat"}, []string{"n1 name"}},
		{"custom data is not text", Query{Text: "notindexed"}, []string{}},
		{"image data is not text", Query{Text: "flakyBASE64"}, []string{}},
		{"role user", Query{Text: "flaky", Role: RoleUser}, []string{"u2 user", "u1 user"}},
		{"role tool", Query{Text: "flaky OR timeout OR lint", Role: RoleTool}, []string{"b1 bash", "r1 toolResult", "a1 toolCall"}},
		{"role assistant", Query{Text: "lock OR migration", Role: RoleAssistant}, []string{"a1 text", "a1 thinking"}},
		{"role other", Query{Text: "quokka OR wombat", Role: RoleOther}, []string{"n1 name", "c1 custom"}},
		{"tool filter", Query{Text: "flaky OR timeout", Tool: "bash"}, []string{"r1 toolResult", "a1 toolCall"}},
		{"tool filter other tool", Query{Text: "flaky", Tool: "edit"}, []string{}},
		{"since", Query{Text: "flaky OR timeout", Since: since}, []string{"u2 user", "r1 toolResult"}},
		{"until", Query{Text: "flaky OR timeout", Until: since}, []string{"a1 toolCall", "u1 user"}},
		{"cwd", Query{Text: "flaky", Cwd: "/home/dev/app"}, []string{"a1 toolCall", "u1 user"}},
		{"cwd above", Query{Text: "flaky", Cwd: "/home/dev"}, []string{"u2 user", "a1 toolCall", "u1 user"}},
		{"cwd is not a prefix of a name", Query{Text: "flaky", Cwd: "/home/dev/ap"}, []string{}},
		{"limit", Query{Text: "flaky", Limit: 2}, []string{"u2 user", "a1 toolCall"}},
	}
	for _, mode := range []string{"index", "no-index"} {
		x := openIndex(t, Options{NoIndex: mode == "no-index"})
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				q := tc.q
				q.Stores = stores
				if diff := cmp.Diff(tc.want, searchAll(t, x, q)); diff != "" {
					t.Errorf("hits (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestHitFields(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	x := openIndex(t, Options{})
	hits, err := collect(x, Query{Text: `"migration races"`, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
	h := hits[0]
	data, _ := os.ReadFile(s1)
	off := strings.Index(string(data), `{"type":"message","id":"a1"`)
	want := Hit{
		Session: Session{Path: s1, ID: "s1-0000", Name: "Wombat session", Cwd: "/home/dev/app", Format: layout.FormatJSONL},
		Entry:   "a1", File: s1, Offset: int64(off), Kind: KindText, Role: RoleAssistant,
		Time:    time.Date(2026, 3, 1, 9, 0, 2, 0, time.UTC),
		Snippet: "the migration races the lock",
		Matches: [][2]int{{4, 19}}, // a phrase is marked whole
	}
	if defaultEngine != EngineFTS5 {
		want.Session.Short = "s1-0000" // (shorter than 8: whole)
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("hit (-want +got):\n%s", diff)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("word ", 100)
	cases := []struct {
		in      string
		want    string
		matches [][2]int
	}{
		{"a \x01b\x02 c", "a b c", [][2]int{{2, 3}}},
		{"x\n\n  \x01é\x02\t\x01z\x02", "x é z", [][2]int{{2, 4}, {5, 6}}},
		{long + "\x01hit\x02 tail", "…" + strings.Repeat("word ", 11) + "hit tail", [][2]int{{58, 61}}},
		{"\x01hit\x02 " + long, "hit " + strings.TrimSpace(strings.Repeat("word ", 39)) + "…", [][2]int{{0, 3}}},
	}
	for _, tc := range cases {
		got, ms := snippet(tc.in)
		if got != tc.want || !cmp.Equal(ms, tc.matches) {
			t.Errorf("snippet(%q) = %q %v, want %q %v", tc.in, got, ms, tc.want, tc.matches)
		}
		for _, m := range ms {
			if got[m[0]:m[1]] == "" {
				t.Errorf("empty match in %q", got)
			}
		}
	}
}

func TestBadQuery(t *testing.T) {
	root, _, _ := fixtureStore(t)
	x := openIndex(t, Options{})
	for _, q := range []string{"", "   ", `"unterminated`, "nosuchcolumn:word", "a AND", "(a"} {
		_, err := collect(x, Query{Text: q, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}})
		if !errors.Is(err, ErrQuery) {
			t.Errorf("query %q: got %v, want ErrQuery", q, err)
		}
	}
}

func TestMissingStore(t *testing.T) {
	x := openIndex(t, Options{})
	// No store: an error, not every file the index happens to hold.
	if _, err := collect(x, Query{Text: "x"}); err == nil {
		t.Error("a query without stores gave no error")
	}
	_, err := collect(x, Query{Text: "x", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: filepath.Join(t.TempDir(), "nope")}}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}

func TestIndexFilesPrivate(t *testing.T) {
	root, _, _ := fixtureStore(t)
	dir := filepath.Join(t.TempDir(), "cache", "search")
	x := openIndex(t, Options{Dir: dir})
	if _, err := collect(x, Query{Text: "flaky", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want 0700", dir, st.Mode().Perm())
	}
	_ = ents
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700 // the own engine's directories
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	// Nothing is written into the store.
	var names []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			names = append(names, filepath.Base(p))
		}
		return nil
	})
	if len(names) != 2 {
		t.Errorf("store holds %v, want only the two sessions", names)
	}
}

func TestIndexDirInStore(t *testing.T) {
	root, _, _ := fixtureStore(t)
	dir := filepath.Join(root, "index")
	x := openIndex(t, Options{Dir: dir})
	_, err := collect(x, Query{Text: "flaky", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: root}}})
	if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "is inside the searched store") {
		t.Errorf("search with its index in the store: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the index directory was made in the store: %v", err)
	}
}
