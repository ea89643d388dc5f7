package agsh

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// recipeStore is the database testdata/recipe-0.11/make.go writes: rows
// in the forms agsh 0.4 to 0.11 write them (see its README.md).
const recipeStore = "testdata/recipe-0.11/agsh-data"

// the made-up Anthropic signature of the recipe.
var recipeSignature = strings.Repeat("EqQBCkgIBxABGAIqQKZ3b2ZrZXNpZ25hdHVyZQ", 6) + "=="

func TestRecipe011(t *testing.T) {
	t.Parallel()
	opts := migrate.ImportOptions{Cwd: "/fallback"}
	res := importtest.Import(t, Source{}, recipeStore, opts)
	if len(res.Damage) != 0 || len(res.Skipped) != 0 || len(res.Sessions) != 5 {
		t.Fatalf("damage %v, skipped %v, %d sessions", res.Damage, res.Skipped, len(res.Sessions))
	}
	lost := "(agsh kept no result for this call when it compacted the session)"
	cases := []struct {
		id       string
		cwd      string
		cwdKnown bool
		want     []importtest.Msg
		contexts int // agsh-context entries
	}{
		{"9b2f6a1e-4c3d-4e5f-8a7b-1c2d3e4f5a60", "/home/user/work/site/docs", true, []importtest.Msg{
			{Role: "user", Text: "why does `make` fail?"},
			{Role: "assistant", Text: "Let me run it.", ToolCalls: []string{"toolu_01Ma8kEbuiLd7Xq2Wn4Rt6Yp"}},
			{Role: "toolResult", Text: "make: *** No rule to make target 'build'.  Stop.\n\nexit code: 2", ToolCallID: "toolu_01Ma8kEbuiLd7Xq2Wn4Rt6Yp"},
			{Role: "assistant", Text: "There is no `build` target in the Makefile; `make site` builds the site."},
			{Role: "user", Text: "show me the logo"},
			{Role: "assistant", ToolCalls: []string{"toolu_01Lg7Pq2Rs4Tu6Vw8Xy0Za1B"}},
			{Role: "toolResult", ToolCallID: "toolu_01Lg7Pq2Rs4Tu6Vw8Xy0Za1B"},
			{Role: "assistant", Text: "It is a 1x1 PNG."},
		}, 2},
		{"3c8e1f2a-7b6d-4a5c-9e8f-0a1b2c3d4e5f", "/home/user/proj", true, []importtest.Msg{
			{Role: "compactionSummary", Text: "## Summary\nThe user is renaming the project from site to www. The Makefile and the CI file are done."},
			{Role: "user", Text: "now update the README"},
			{Role: "assistant", ToolCalls: []string{"toolu_01Ed5Fg6Hi7Jk8Lm9No0Pq1R"}},
			{Role: "toolResult", Text: lost, ToolCallID: "toolu_01Ed5Fg6Hi7Jk8Lm9No0Pq1R"},
			{Role: "assistant", Text: "Updated the README."},
			{Role: "user", Text: "thanks"},
			{Role: "assistant", Text: "You're welcome."},
		}, 2},
		{"71d0c9b8-a7f6-4e5d-8c4b-3a2918070605", "/srv/app", true, []importtest.Msg{
			{Role: "user", Text: "list files"},
			{Role: "assistant", ToolCalls: []string{"toolu_01Ls0Aa1Bb2Cc3Dd4Ee5Ff6G"}},
			{Role: "toolResult", Text: "a.txt\nb.txt\n", ToolCallID: "toolu_01Ls0Aa1Bb2Cc3Dd4Ee5Ff6G"},
			{Role: "assistant", Text: "Two files: a.txt and b.txt."},
		}, 1},
		{"05a4b3c2-d1e0-4f9e-8d7c-6b5a49382716", "/srv/app", true, []importtest.Msg{
			{Role: "user", Text: "count the lines of a.txt"},
			{Role: "assistant", Text: "a.txt has 3 lines."},
		}, 1},
		{"d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70", "/fallback", false, []importtest.Msg{
			{Role: "user", Text: "hi"},
			{Role: "assistant", Text: "Hello!"},
		}, 0},
	}
	for _, c := range cases {
		s := res.ByID(t, c.id)
		if s.Cwd != c.cwd || s.CwdKnown != c.cwdKnown {
			t.Errorf("%s: cwd %q (known %v), want %q (%v)", c.id, s.Cwd, s.CwdKnown, c.cwd, c.cwdKnown)
		}
		l := importtest.Load(t, s, "")
		got := l.Messages()
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.id, diff)
		}
		importtest.CheckToolPairs(t, c.id, got)
		n := 0
		for _, e := range l.Entries {
			if ct, _ := e.StringField("customType"); ct == "agsh-context" {
				n++
			}
			if e.Type == jsonl.TypeMessage && strings.Contains(string(e.Raw), `"role":"user"`) &&
				(strings.Contains(string(e.Raw), "[Environment context]") || strings.Contains(string(e.Raw), "<context>")) {
				t.Errorf("%s: a user message keeps agsh's context block: %s", c.id, e.Raw)
			}
			if e.Type == jsonl.TypeMessage && strings.Contains(string(e.Raw), `"role":"assistant"`) &&
				!strings.Contains(string(e.Raw), `"provider":"unknown","model":"unknown"`) {
				t.Errorf("%s: assistant without the unknown model: %s", c.id, e.Raw)
			}
		}
		if n != c.contexts {
			t.Errorf("%s: %d agsh-context entries, want %d", c.id, n, c.contexts)
		}
	}

	first := string(res.ByID(t, cases[0].id).Bytes(""))
	for _, frag := range []string{
		// Only the real signature is carried.
		`{"type":"thinking","thinking":"The user wants to know why make fails. Run it.","thinkingSignature":"` + recipeSignature + `"}`,
		`{"type":"thinking","thinking":"The Makefile has no build target."}`,
		`{"type":"thinking","thinking":"A tiny image."}`,
		// Tool result parts, not their JSON.
		`"content":[{"type":"text","text":"make: *** No rule to make target 'build'.  Stop.\n"},{"type":"text","text":"exit code: 2"}],"isError":true`,
		`"content":[{"type":"image","data":"iVBORw0KGgo`,
		// The block is kept out of the context, whole.
		`"customType":"agsh-context","data":{"text":"<context>\n[Current task list]\n[~] 1 - Fix the build\n[ ] 2 - Update the docs\n\n[Environment context]\nWorking directory: /home/user/work/site\nDate: Fri, 17 Apr 2026 10:00:00 +0200\n</context>"}`,
	} {
		if !strings.Contains(first, frag) {
			t.Errorf("first session lacks %s", frag)
		}
	}
	if strings.Contains(first, `"type":"tool_result"`) || strings.Contains(first, `\"type\":\"text\"`) {
		t.Error("tool result parts written as JSON text")
	}
	compacted := string(res.ByID(t, cases[1].id).Bytes(""))
	if !strings.Contains(compacted, `"type":"compaction"`) ||
		!strings.Contains(compacted, `"details":{"postCompactionContext":"[Environment context]\nWorking directory: /home/user/proj\nDate: Thu, 16 Apr 2026 18:00:00 +0200\n\n[Scratchpad entries]\n- \"execute_command_1\" (34.1 KB)\n"}`) ||
		strings.Contains(compacted, `"text":"[Conversation summary`) {
		t.Errorf("compacted session:\n%s", compacted)
	}
	importtest.CheckReimport(t, Source{}, recipeStore, opts, res)
}

func TestSplitContext(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, block, prompt string }{
		{"<context>\n[Environment context]\nWorking directory: /w\nDate: Fri, 17 Apr 2026 10:00:00 +0200\n</context>\n\nhi",
			"<context>\n[Environment context]\nWorking directory: /w\nDate: Fri, 17 Apr 2026 10:00:00 +0200\n</context>", "hi"},
		{"<context>\n[Current task list]\n[ ] 1 - a\n\n</context>\n\nhi", "<context>\n[Current task list]\n[ ] 1 - a\n\n</context>", "hi"},
		{"<context>\n[Environment context]\nDate: D\n</context>\n\n", "<context>\n[Environment context]\nDate: D\n</context>", ""},
		{"[Environment context]\nWorking directory: /w\nDate: D\n\nhi\n\nthere", "[Environment context]\nWorking directory: /w\nDate: D\n", "hi\n\nthere"},
		{"[Environment context]\nDate: D\n\nhi", "[Environment context]\nDate: D\n", "hi"},
		{"[Current task list]\n[x] 1 - a\n[~] 2 - b\n\n[Environment context]\nWorking directory: /w\nDate: D\n\nhi", "[Current task list]\n[x] 1 - a\n[~] 2 - b\n\n[Environment context]\nWorking directory: /w\nDate: D\n", "hi"},
		// What the user typed, not a block of agsh's.
		{"<context>\nmy own tags</context>\n\nhi", "", "<context>\nmy own tags</context>\n\nhi"},
		{"<context> no newline", "", "<context> no newline"},
		{"[Environment context]\nsomething else\n\nhi", "", "[Environment context]\nsomething else\n\nhi"},
		{"[Environment context]\nDate: D\nmore\n\nhi", "", "[Environment context]\nDate: D\nmore\n\nhi"},
		{"[Current task list]\nnot a task\n\n[Environment context]\nDate: D\n\nhi", "", "[Current task list]\nnot a task\n\n[Environment context]\nDate: D\n\nhi"},
		{"[Current task list]\n[ ] 1 - a\n\nhi", "", "[Current task list]\n[ ] 1 - a\n\nhi"},
		{"plain", "", "plain"},
	}
	for _, c := range cases {
		block, prompt := splitContext(c.in)
		if block != c.block || prompt != c.prompt {
			t.Errorf("splitContext(%q) = %q, %q; want %q, %q", c.in, block, prompt, c.block, c.prompt)
		}
	}
}

func TestRealSignature(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	cases := []struct {
		in   *string
		want string
	}{
		{nil, ""},
		{str(""), ""},
		{str("sig"), ""},
		{str("placeholder"), ""},
		{str(strings.Repeat("x", 63)), ""},
		{str(strings.Repeat("not base64! ", 10)), ""},
		{str(recipeSignature), recipeSignature},
	}
	for _, c := range cases {
		if got := realSignature(c.in); got != c.want {
			t.Errorf("realSignature(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMetadataModel: agsh 0.1 to 0.11 leave sessions.metadata NULL; a
// database whose metadata names the model and a working directory gives
// them to the session (the directory wins over the context blocks).
func TestMetadataModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, locked_by TEXT, metadata TEXT)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL)`,
		`INSERT INTO sessions VALUES ('s1', '2026-04-17T08:00:00+00:00', '2026-04-17T08:00:00+00:00', NULL, '{"cwd":"/meta","model":"claude-sonnet-4-5","provider":"anthropic"}')`,
		`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'user', '<context>
[Environment context]
Working directory: /block
Date: D
</context>

hi', '2026-04-17T08:00:01+00:00')`,
		`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'assistant', '[{"type":"text","text":"hello"}]', '2026-04-17T08:00:02+00:00')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{Cwd: "/fallback"})
	s := res.ByID(t, "s1")
	if s.Cwd != "/meta" || !s.CwdKnown {
		t.Errorf("cwd %q", s.Cwd)
	}
	if f := string(s.Bytes("")); !strings.Contains(f, `"provider":"anthropic","model":"claude-sonnet-4-5"`) {
		t.Errorf("model not taken from metadata:\n%s", f)
	}
}
