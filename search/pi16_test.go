package search

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// pi16Session writes, through the engine, a session with pi 1.x's
// entries: a system message, usage entries and context edits that omit
// and replace messages. It returns the store's directory and the ids of
// the system message, the user message (omitted), the assistant message
// (replaced), the usage entry and the two edits.
func pi16Session(t *testing.T) (dir string, ids map[string]string) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(ctx, "/w/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1772355600000)
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Total: 0.25})
	ids = map[string]string{}
	must := func(name string, id string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	id, err := s.AppendMessage(message.NewSystem("answer tersely like a pelican", at))
	must("system", id, err)
	id, err = s.AppendMessage(message.NewUser("run the build and paste the whole log", at))
	must("user", id, err)
	id, err = s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText("HUGE LOG of gibbon output")}, usage, message.StopStop, at))
	must("assistant", id, err)
	id, err = s.AppendUsage("title", "anthropic", "claude-haiku", usage, "titled by the marmoset")
	must("usage", id, err)
	id, err = s.AppendContextEdit(ids["user"], nil)
	must("omit", id, err)
	id, err = s.AppendContextEdit(ids["assistant"], "[gibbon log removed by okapi]")
	must("replace", id, err)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

// TestSearchPi16Entries: a message a context edit omits or replaces is
// still found by its own text (the history is unchanged), the
// replacement is the edit's own text, a system message has role system,
// and usage entries are not text.
func TestSearchPi16Entries(t *testing.T) {
	dir, ids := pi16Session(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: dir}}
	idOrder := map[string]int{}
	hit := func(name, kind string) string {
		h := ids[name] + " " + kind
		if _, ok := idOrder[h]; !ok {
			idOrder[h] = len(idOrder)
		}
		return h
	}
	for _, h := range [][2]string{{"system", "system"}, {"user", "user"}, {"assistant", "text"}, {"replace", "contextEdit"}} {
		hit(h[0], h[1])
	}
	cases := []struct {
		name string
		q    Query
		want []string
	}{
		{"omitted message", Query{Text: "paste"}, []string{hit("user", "user")}},
		{"replaced message", Query{Text: "huge"}, []string{hit("assistant", "text")}},
		{"replacement", Query{Text: "okapi"}, []string{hit("replace", "contextEdit")}},
		{"both", Query{Text: "gibbon"}, []string{hit("assistant", "text"), hit("replace", "contextEdit")}},
		{"replacement is other", Query{Text: "gibbon", Role: RoleOther}, []string{hit("replace", "contextEdit")}},
		{"replacement is not assistant", Query{Text: "gibbon", Role: RoleAssistant}, []string{hit("assistant", "text")}},
		{"system message", Query{Text: "pelican"}, []string{hit("system", "system")}},
		{"role system", Query{Text: "pelican OR paste", Role: RoleSystem}, []string{hit("system", "system")}},
		{"system is not other", Query{Text: "pelican", Role: RoleOther}, []string{}},
		{"usage note is not text", Query{Text: "marmoset"}, []string{}},
		{"usage model is not text", Query{Text: "haiku OR title"}, []string{}},
	}
	for _, mode := range []string{"index", "no-index"} {
		x := openIndex(t, Options{NoIndex: mode == "no-index"})
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				q := tc.q
				q.Stores = stores
				// The entries were written within a few ms: the order
				// of the hits (newest first) is not what is tested.
				got := searchAll(t, x, q)
				slices.SortFunc(got, func(a, b string) int { return cmp.Compare(idOrder[a], idOrder[b]) })
				if diff := gocmp.Diff(tc.want, got); diff != "" {
					t.Errorf("hits (-want +got):\n%s", diff)
				}
			})
		}
	}
	// The hit of a system message and of a replacement: role, label and
	// the snippet of the text.
	x := openIndex(t, Options{})
	for _, tc := range []struct {
		q                    string
		role, label, snippet string
	}{
		{"pelican", RoleSystem, "system", "answer tersely like a pelican"},
		{"okapi", RoleOther, "context edit", "[gibbon log removed by okapi]"},
	} {
		hits, err := collect(x, Query{Text: tc.q, Stores: stores})
		if err != nil || len(hits) != 1 {
			t.Fatalf("search %q: %d hits, %v", tc.q, len(hits), err)
		}
		h := hits[0]
		if h.Role != tc.role || h.Label() != tc.label || h.Snippet != tc.snippet {
			t.Errorf("search %q: role %q label %q snippet %q, want %q %q %q", tc.q, h.Role, h.Label(), h.Snippet, tc.role, tc.label, tc.snippet)
		}
	}
}
