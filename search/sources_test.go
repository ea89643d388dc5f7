package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/claude"
	"github.com/sessctl/sessctl/migrate/opencode"
)

func TestAgentUse(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	projects := filepath.Join(data, "agentuse", "project")
	start := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	store, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(projects, "0123456789abcdef", "session"), Sync: agentuse.SyncNone,
		Now: func() time.Time { return start.Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "reviewer", Name: "Pangolin reviewer"}, Model: "p:m",
		Project: agentuse.Project{Root: "/home/dev/app", Cwd: "/home/dev/app"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m, err := w.AddMessage(agentuse.MessageSpec{Task: "You review changes carefully.", User: "deploy the walrus service", ModelID: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	text, err := w.AddPart(m, agentuse.TextPart("The capybara looks fine", start))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddPart(m, agentuse.ReasoningPart("thinking about lemurs", nil, start.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	tool, err := w.AddPart(m, agentuse.ToolPart("call_1", "bash", map[string]any{"command": "ls tapir"}, start.Add(2*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CompleteTool(m, tool, "tapir.txt\nwalrus.txt", nil); err != nil {
		t.Fatal(err)
	}
	sub, err := w.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "helper", Name: "helper", IsSubAgent: true}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := sub.AddMessage(agentuse.MessageSpec{Task: "help", User: "count the okapis"})
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()

	stores := []layout.Place{{Format: layout.FormatAgentUse, Root: projects}}
	for _, mode := range []string{"index", "no-index"} {
		t.Run(mode, func(t *testing.T) {
			x := openIndex(t, Options{NoIndex: mode == "no-index"})
			cases := []struct {
				q    Query
				want []string
			}{
				{Query{Text: "walrus"}, []string{tool + " tool", m + " user"}},
				{Query{Text: "walrus", Role: RoleUser}, []string{m + " user"}},
				{Query{Text: "tapir", Tool: "bash"}, []string{tool + " tool"}},
				{Query{Text: "capybara"}, []string{text + " text"}},
				{Query{Text: "lemurs", Role: RoleAssistant}, []string{"" + mustPartID(t, store, ctx, "reasoning") + " thinking"}},
				{Query{Text: "pangolin"}, []string{w.ID() + " name"}},
				{Query{Text: "carefully"}, []string{m + " task"}},
				{Query{Text: "okapis"}, []string{sm + " user"}},
				{Query{Text: "walrus", Cwd: "/home/dev/app"}, []string{tool + " tool", m + " user"}},
				{Query{Text: "walrus", Cwd: "/elsewhere"}, []string{}},
			}
			for _, tc := range cases {
				q := tc.q
				q.Stores = stores
				if diff := cmp.Diff(tc.want, searchAll(t, x, q)); diff != "" {
					t.Errorf("%q (-want +got):\n%s", q.Text, diff)
				}
			}
			hits, err := collect(x, Query{Text: "capybara", Stores: stores})
			if err != nil || len(hits) != 1 {
				t.Fatalf("capybara: %v %v", hits, err)
			}
			h := hits[0]
			want := Session{Path: w.Dir(), ID: w.ID(), Name: "Pangolin reviewer", Cwd: "/home/dev/app", Format: layout.FormatAgentUse}
			if diff := cmp.Diff(want, h.Session); diff != "" {
				t.Errorf("session (-want +got):\n%s", diff)
			}
			if !h.Time.Equal(start) {
				t.Errorf("time %v, want %v", h.Time, start)
			}
		})
	}

	// A part rewritten, a session deleted: the index follows.
	x := openIndex(t, Options{})
	searchAll(t, x, Query{Text: "capybara", Stores: stores})
	if err := w.FinishText(m, text, "The gnu looks fine"); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, Query{Text: "capybara OR gnu", Stores: stores}); !cmp.Equal(got, []string{text + " text"}) {
		t.Errorf("after the part changed: %v", got)
	}
	if got := searchAll(t, x, Query{Text: "capybara", Stores: stores}); len(got) != 0 {
		t.Errorf("the old text of a changed part is still found: %v", got)
	}
	if err := os.RemoveAll(filepath.Join(w.Dir(), "subagent")); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, Query{Text: "okapis", Stores: stores}); len(got) != 0 {
		t.Errorf("a deleted subagent session is still found: %v", got)
	}
}

// mustPartID returns the id of the first part of a type in the store's
// only top-level session.
func mustPartID(t *testing.T, store *agentuse.Store, ctx context.Context, typ string) string {
	t.Helper()
	ss, err := store.List(ctx, agentuse.ListOptions{})
	if err != nil || len(ss) == 0 {
		t.Fatalf("list: %v", err)
	}
	c, err := store.Read(ctx, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages {
		for _, p := range m.Parts {
			if p.Type == typ {
				return p.ID
			}
		}
	}
	t.Fatalf("no %s part", typ)
	return ""
}

// importInto runs an importer over a source and writes its sessions into
// dir as session files.
func importInto(t *testing.T, src migrate.Source, path, dir string) int {
	t.Helper()
	ctx := context.Background()
	st, err := src.Open(ctx, path, migrate.ImportOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for ref, err := range st.Sessions(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		conv, err := st.Convert(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range conv.Sessions {
			writeLines(t, filepath.Join(dir, s.FileName()), nil)
			if err := os.WriteFile(filepath.Join(dir, s.FileName()), s.Bytes(""), 0o600); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	return n
}

func TestImportedSessions(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	if n := importInto(t, opencode.Source{}, "../migrate/opencode/testdata/real-1.18.33/opencode-data", filepath.Join(root, "opencode")); n != 8 {
		t.Fatalf("opencode: %d sessions, want 8", n)
	}
	if n := importInto(t, claude.Source{}, "../migrate/claude/testdata/history/claude-home", filepath.Join(root, "claude")); n == 0 {
		t.Fatal("claude: no sessions")
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	cases := []struct {
		q     Query
		kinds []string // the kinds of the hits, in order of first appearance
	}{
		{Query{Text: `"hello opencode"`, Role: RoleTool}, []string{"toolResult"}},
		{Query{Text: `"Subagent report"`, Role: RoleAssistant}, []string{"text"}},
		{Query{Text: `"starts the server"`}, []string{"text"}},
		{Query{Text: `"main.go do"`, Role: RoleUser}, []string{"user"}},
		{Query{Text: `"missing.txt"`, Tool: "read"}, []string{"toolCall", "toolResult"}},
	}
	for _, mode := range []string{"index", "no-index"} {
		x := openIndex(t, Options{NoIndex: mode == "no-index"})
		for _, tc := range cases {
			q := tc.q
			q.Stores = stores
			hits, err := collect(x, q)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, h := range hits {
				if !slices.Contains(kinds, h.Kind.String()) {
					kinds = append(kinds, h.Kind.String())
				}
				if h.Entry == "" || h.Session.ID == "" || h.Time.IsZero() {
					t.Errorf("%s %q: hit without entry, session id or time: %+v", mode, q.Text, h)
				}
			}
			if diff := cmp.Diff(tc.kinds, kinds); diff != "" {
				t.Errorf("%s %q (-want +got):\n%s", mode, q.Text, diff)
			}
		}
	}
}
