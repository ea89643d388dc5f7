package search

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
)

// The own engine shortens a hit's session id among every JSONL session
// of the stores searched (hits or not), and of no other store its index
// holds; the other engines leave Session.Short empty.
func TestHitShortIDs(t *testing.T) {
	base := t.TempDir()
	searched := filepath.Join(base, "a", "sessions")
	other := filepath.Join(base, "b", "sessions")
	want := &shortid.Set{}
	// Ids that share their first 23 characters, only the first of
	// which matches the query: the hit's short id must be long enough to
	// tell it from the others.
	for i, word := range []string{"kiwiword", "plain", "plain"} {
		id := fmt.Sprintf("0badcafe-1234-5678-9abc-def%d0000000%d", i, i+1)
		p := filepath.Join(searched, "--home-dev-app--", "2026-03-01T09-00-00-000Z_"+id+".jsonl")
		writeLines(t, p, []string{
			header(id, "/home/dev/app", "2026-03-01T09:00:00.000Z"),
			msg(fmt.Sprintf("u%d", i), "", "2026-03-01T09:00:01.000Z", `{"role":"user","content":"a `+word+` text","timestamp":1}`),
		})
		want.Add(p, id)
	}
	// A store the index also holds, not searched: a longer shared prefix
	// there must not lengthen the hit's id.
	oid := "0badcafe-1234-5678-9abc-def000000002"
	writeLines(t, filepath.Join(other, "--x--", "2026-03-01T09-00-00-000Z_"+oid+".jsonl"), []string{
		header(oid, "/x", "2026-03-01T09:00:00.000Z"),
		msg("v1", "", "2026-03-01T09:00:01.000Z", `{"role":"user","content":"a kiwiword text","timestamp":1}`),
	})
	dir := filepath.Join(base, "index")
	storeA := layout.Place{Name: "a", Format: layout.FormatJSONL, Root: searched}
	storeB := layout.Place{Name: "b", Format: layout.FormatJSONL, Root: other}
	for _, e := range []Engine{EngineOwn, EngineFTS5} {
		x := openIndex(t, Options{Dir: dir, Engine: e})
		if _, err := collect(x, Query{Text: "kiwiword", Stores: []layout.Place{storeA, storeB}}); err != nil {
			t.Fatal(err)
		}
		hits, err := collect(x, Query{Text: "kiwiword", Stores: []layout.Place{storeA}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 {
			t.Fatalf("%s: %d hits, want 1", e, len(hits))
		}
		got := hits[0].Session.Short
		switch {
		case e == EngineOwn && got != want.Short(hits[0].Session.ID):
			t.Errorf("own: Short = %q, want %q (among the searched store's sessions)", got, want.Short(hits[0].Session.ID))
		case e == EngineOwn && len(got) != len("0badcafe-1234-5678-9abc-def0"):
			t.Errorf("own: Short = %q, want the 24 characters that tell it from the searched store's sessions", got)
		case e != EngineOwn && got != "":
			t.Errorf("%s: Short = %q, want it empty", e, got)
		}
	}
	// The same Index, after an append (the kept set serves) and after a
	// new session whose id shares more of the hit's (it must not).
	x := openIndex(t, Options{Dir: dir, Engine: EngineOwn, Watch: true})
	q := Query{Text: "kiwiword", Stores: []layout.Place{storeA}}
	hitID := "0badcafe-1234-5678-9abc-def000000001"
	hitFile := filepath.Join(searched, "--home-dev-app--", "2026-03-01T09-00-00-000Z_"+hitID+".jsonl")
	shortOf := func(what string) string {
		t.Helper()
		hits, err := collect(x, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Session.ID == hitID {
				return h.Session.Short
			}
		}
		t.Fatalf("%s: no hit in %s", what, hitID)
		return ""
	}
	before := shortOf("first")
	appendLines(t, hitFile, msg("u9", "u0", "2026-03-01T09:00:09.000Z", `{"role":"user","content":"more kiwiword","timestamp":9}`))
	if got := shortOf("after an append"); got != before {
		t.Errorf("after an append: Short = %q, want %q", got, before)
	}
	nid := "0badcafe-1234-5678-9abc-def000000009"
	writeLines(t, filepath.Join(searched, "--home-dev-app--", "2026-03-02T09-00-00-000Z_"+nid+".jsonl"), []string{
		header(nid, "/home/dev/app", "2026-03-02T09:00:00.000Z"),
		msg("w1", "", "2026-03-02T09:00:01.000Z", `{"role":"user","content":"plain","timestamp":1}`),
	})
	if got := shortOf("after a new session"); got != hitID {
		t.Errorf("after a session sharing 34 characters: Short = %q, want the whole id %q", got, hitID)
	}
}

// ignoreShort compares hits of engines apart from Session.Short, which
// only the own engine sets.
var ignoreShort = cmpopts.IgnoreFields(Session{}, "Short")

// TestBelow: a path is below a root it equals or lies inside (isUnder),
// never below a sibling whose name the root's starts.
func TestBelow(t *testing.T) {
	sep := string(filepath.Separator)
	a := sep + filepath.Join("a", "b")
	for _, c := range []struct {
		path  string
		roots []string
		want  bool
	}{
		{a, []string{a}, true},
		{a + sep + "s.jsonl", []string{a}, true},
		{a + "c" + sep + "s.jsonl", []string{a}, false},
		{a + sep + "s.jsonl", []string{a + sep}, true},
		{a + sep + "s.jsonl", []string{sep}, true},
		{a + sep + "s.jsonl", []string{sep + "x", a + "c", a}, true},
		{a + sep + "s.jsonl", nil, false},
		{sep + "a", []string{a}, false},
		{a, []string{sep + "a" + sep}, true},
	} {
		if got := below(c.path, c.roots); got != c.want {
			t.Errorf("below(%q, %q) = %v, want %v", c.path, c.roots, got, c.want)
		}
	}
}
