package claude

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// expected reads a Claude Code file independently of the importer and
// returns the messages its records should become, in file order: one
// assistant message per message.id, one toolResult per tool_result block,
// the rest of a user record as a user message (custom for isMeta and
// command wrappers), a compaction summary for a compact boundary.
func expected(t *testing.T, path string, keep func(map[string]any) bool) []importtest.Msg {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []importtest.Msg
	asst := map[string]int{}
	texts := map[int][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) != nil || !keep(r) {
			continue
		}
		msg, _ := r["message"].(map[string]any)
		switch r["type"] {
		case "system":
			if r["subtype"] == "compact_boundary" {
				out = append(out, importtest.Msg{Role: "compactionSummary"})
			}
		case "assistant":
			id, _ := msg["id"].(string)
			i, seen := asst[id]
			if !seen {
				out = append(out, importtest.Msg{Role: "assistant"})
				i = len(out) - 1
				asst[id] = i
			}
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				bm := b.(map[string]any)
				switch bm["type"] {
				case "text":
					texts[i] = append(texts[i], bm["text"].(string))
				case "tool_use":
					out[i].ToolCalls = append(out[i].ToolCalls, bm["id"].(string))
				}
			}
		case "user":
			if r["isCompactSummary"] == true {
				s, _ := msg["content"].(string)
				n := len(out) - 1
				if n >= 0 && out[n].Role == "compactionSummary" && out[n].Text == "" {
					out[n].Text = s
				} else {
					out = append(out, importtest.Msg{Role: "compactionSummary", Text: s})
				}
				continue
			}
			var text []string
			first := ""
			if s, ok := msg["content"].(string); ok {
				text, first = []string{s}, s
			}
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				bm := b.(map[string]any)
				switch bm["type"] {
				case "tool_result":
					out = append(out, importtest.Msg{Role: "toolResult", Text: resultText(bm["content"]), ToolCallID: bm["tool_use_id"].(string)})
				case "text":
					if first == "" {
						first = bm["text"].(string)
					}
					text = append(text, bm["text"].(string))
				}
			}
			if len(text) == 0 {
				continue
			}
			m := importtest.Msg{Role: "user", Text: strings.Join(text, "\n")}
			switch {
			case r["isMeta"] == true:
				m.Role, m.CustomType = "custom", "claude-meta"
			case isCommand(first):
				m.Role, m.CustomType = "custom", "claude-command"
			}
			out = append(out, m)
		}
	}
	for i, ts := range texts {
		out[i].Text = strings.Join(ts, "\n")
	}
	return out
}

func resultText(c any) string {
	if s, ok := c.(string); ok {
		return s
	}
	var parts []string
	list, _ := c.([]any)
	for _, b := range list {
		if bm, ok := b.(map[string]any); ok && bm["type"] == "text" {
			parts = append(parts, bm["text"].(string))
		}
	}
	return strings.Join(parts, "\n")
}

func sidechain(want bool) func(map[string]any) bool {
	return func(r map[string]any) bool { return (r["isSidechain"] == true) == want }
}

func all(map[string]any) bool { return true }

// TestCorpus imports every Claude Code case of the foreign corpus and
// checks each imported session against an independent reading of its
// source: every message in the context in order with its role, tool
// calls paired with results, subagents linked to their parent, a
// well-formed file, and identical bytes on re-import.
func TestCorpus(t *testing.T) {
	t.Parallel()
	root := importtest.Corpus(t, "claude")
	type sess struct {
		id, file, parent, name string
		keep                   func(map[string]any) bool
	}
	cases := []struct {
		dir      string
		sessions []sess
	}{
		{"flat-subagents-2.0.76", []sess{
			{id: "ddc64003-01e3-4751-91d6-01f822976159", file: "projects/C--Users-user/ddc64003-01e3-4751-91d6-01f822976159.jsonl", keep: all},
			{id: "ddc64003-01e3-4751-91d6-01f822976159/agent-aaa3c04", file: "projects/C--Users-user/agent-aaa3c04.jsonl", parent: "ddc64003-01e3-4751-91d6-01f822976159", keep: all},
			{id: "ddc64003-01e3-4751-91d6-01f822976159/agent-accbf49", file: "projects/C--Users-user/agent-accbf49.jsonl", parent: "ddc64003-01e3-4751-91d6-01f822976159", keep: all},
		}},
		{"flat-task-subagent-2.0.74", []sess{
			{id: "796f117a-c727-4436-828b-5a4f71233f2a/agent-a798a57", file: "projects/C--Users-user/agent-a798a57.jsonl", parent: "796f117a-c727-4436-828b-5a4f71233f2a", keep: all},
		}},
		{"hier-subagent-2.1.97", []sess{
			{id: "8c880a68-969b-4b92-8733-a4927179d072", file: "projects/-home-user-Claude/8c880a68-969b-4b92-8733-a4927179d072.jsonl", keep: all},
			{id: "8c880a68-969b-4b92-8733-a4927179d072/agent-a2df51c9276581f81", file: "projects/-home-user-Claude/8c880a68-969b-4b92-8733-a4927179d072/subagents/agent-a2df51c9276581f81.jsonl", parent: "8c880a68-969b-4b92-8733-a4927179d072", name: "claude-code-guide: Claude Code conversation history", keep: all},
		}},
		{"compaction-slice-2.1.39", []sess{
			{id: "4d5611e5-241a-462a-8d15-5122611a9569", file: "projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", keep: all},
			{id: "4d5611e5-241a-462a-8d15-5122611a9569/agent-acompact-e1f845", file: "projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", parent: "4d5611e5-241a-462a-8d15-5122611a9569", keep: all},
		}},
		{"summary-lines-2.0.24", []sess{
			{id: "76963933-e8f7-408a-b818-29491f875cea", file: "projects/-home-user/76963933-e8f7-408a-b818-29491f875cea.jsonl", name: "Code Search Exploration", keep: all},
			{id: "99bfcf9c-dff3-4b28-8828-fc2be6fd1e26", file: "projects/-home-user/99bfcf9c-dff3-4b28-8828-fc2be6fd1e26.jsonl", name: "Claude Code CLI Framework Overview", keep: sidechain(false)},
			{id: "99bfcf9c-dff3-4b28-8828-fc2be6fd1e26/sidechain-b4e885a6-25a0-4d3c-850f-03311bbdf15b", file: "projects/-home-user/99bfcf9c-dff3-4b28-8828-fc2be6fd1e26.jsonl", parent: "99bfcf9c-dff3-4b28-8828-fc2be6fd1e26", name: "Low Credit Balance Warning", keep: sidechain(true)},
			{id: "e17ea2d6-d680-40e6-8257-a6fb7d6f7d74", file: "projects/-home-user/e17ea2d6-d680-40e6-8257-a6fb7d6f7d74.jsonl", keep: all},
			{id: "ec6348c3-0d8b-4c6c-a512-c9842f4f3a71", file: "projects/-home-user/ec6348c3-0d8b-4c6c-a512-c9842f4f3a71.jsonl", keep: sidechain(false)},
			{id: "ec6348c3-0d8b-4c6c-a512-c9842f4f3a71/sidechain-6d86ff46-507e-4f55-9807-f0caa9d8c099", file: "projects/-home-user/ec6348c3-0d8b-4c6c-a512-c9842f4f3a71.jsonl", parent: "ec6348c3-0d8b-4c6c-a512-c9842f4f3a71", keep: sidechain(true)},
		}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.dir] = true
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(root, c.dir, "claude-home")
			opts := migrate.ImportOptions{Cwd: "/fallback"}
			res := importtest.Import(t, Source{}, home, opts)
			if len(res.Damage) > 0 {
				t.Errorf("damage: %v", res.Damage)
			}
			if len(res.Sessions) != len(c.sessions) {
				t.Errorf("%d sessions, want %d", len(res.Sessions), len(c.sessions))
			}
			for _, want := range c.sessions {
				s := res.ByID(t, want.id)
				parentPath := ""
				if want.parent != "" {
					parentPath = "/store/" + want.parent + ".jsonl"
				}
				if s.ParentSourceID != want.parent {
					t.Errorf("%s: parent %q, want %q", want.id, s.ParentSourceID, want.parent)
				}
				if s.Name != want.name {
					t.Errorf("%s: name %q, want %q", want.id, s.Name, want.name)
				}
				if !s.CwdKnown || s.Cwd == "/fallback" {
					t.Errorf("%s: cwd %q not from the source", want.id, s.Cwd)
				}
				l := importtest.Load(t, s, parentPath)
				got := l.Messages()
				exp := expected(t, filepath.Join(home, want.file), want.keep)
				for i := range got {
					got[i].Text = strings.TrimSpace(got[i].Text)
				}
				for i := range exp {
					exp[i].Text = strings.TrimSpace(exp[i].Text)
				}
				if diff := cmp.Diff(exp, got); diff != "" {
					t.Errorf("%s: context messages (-source +imported):\n%s", want.id, diff)
				}
				importtest.CheckToolPairs(t, want.id, got)
			}
			importtest.CheckReimport(t, Source{}, home, opts, res)
		})
	}
	// Cases added to the corpus later must be listed here.
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() && !seen[e.Name()] {
			t.Run(e.Name(), func(t *testing.T) {
				t.Parallel()
				res := importtest.Import(t, Source{}, filepath.Join(root, e.Name(), "claude-home"), migrate.ImportOptions{})
				for _, s := range res.Sessions {
					importtest.CheckToolPairs(t, s.SourceID, importtest.Load(t, s, "").Messages())
				}
			})
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func line(fields ...string) string { return "{" + strings.Join(fields, ",") + "}\n" }

// TestBranchesAndDamage: a parentUuid fork stays a fork with the branch
// of the last message written last; a damaged line is reported with its
// path and line and the rest is imported.
func TestBranchesAndDamage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := filepath.Join(home, "projects", "-w", "s1.jsonl")
	env := `"sessionId":"s1","cwd":"/w","version":"2.1.0"`
	writeFile(t, file,
		line(`"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"first"}`, env)+
			line(`"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","role":"assistant","model":"claude-x","content":[{"type":"text","text":"old answer"}],"stop_reason":"end_turn"}`, env)+
			"{this line is damaged\n"+
			line(`"type":"user","uuid":"u2","parentUuid":"u1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"edited question"}`, env)+
			line(`"type":"assistant","uuid":"a2","parentUuid":"u2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":"hm","signature":"sig"}]}`, env)+
			line(`"type":"assistant","uuid":"a3","parentUuid":"a2","timestamp":"2026-01-01T00:00:04Z","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"p":1}}]}`, env)+
			line(`"type":"assistant","uuid":"a4","parentUuid":"a3","timestamp":"2026-01-01T00:00:04Z","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t2","name":"Grep","input":{}}],"usage":{"input_tokens":3,"output_tokens":7,"cache_read_input_tokens":11,"cache_creation_input_tokens":13}}`, env)+
			line(`"type":"user","uuid":"r1","parentUuid":"a3","timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"}]}`, env)+
			line(`"type":"user","uuid":"r2","parentUuid":"a4","timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"two"}],"is_error":true}]}`, env)+
			line(`"type":"progress","uuid":"p1","parentUuid":"r2","timestamp":"2026-01-01T00:00:06Z"`, env)+
			line(`"type":"assistant","uuid":"a5","parentUuid":"p1","timestamp":"2026-01-01T00:00:07Z","message":{"id":"m3","role":"assistant","model":"claude-x","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}`, env))
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Path != file || res.Damage[0].Line != 3 || !errors.Is(res.Damage[0], migrate.ErrDamaged) {
		t.Fatalf("damage = %v, want %s line 3", res.Damage, file)
	}
	s := res.ByID(t, "s1")
	l := importtest.Load(t, s, "")
	got := l.Messages()
	want := []importtest.Msg{
		{Role: "user", Text: "first"},
		{Role: "user", Text: "edited question"},
		{Role: "assistant", ToolCalls: []string{"t1", "t2"}},
		{Role: "toolResult", Text: "one", ToolCallID: "t1"},
		{Role: "toolResult", Text: "two", ToolCallID: "t2"},
		{Role: "assistant", Text: "done"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// The abandoned branch is in the file, before the active one.
	var old, edited int
	for i, e := range l.Entries {
		switch {
		case strings.Contains(string(e.Raw), "old answer"):
			old = i
		case strings.Contains(string(e.Raw), "edited question"):
			edited = i
		}
	}
	if old == 0 || old > edited {
		t.Errorf("abandoned branch at line %d, active branch starts at %d", old+1, edited+1)
	}
	// The merged reply carries the usage and model of its last line.
	for _, e := range l.Entries {
		if strings.Contains(string(e.Raw), `"id":"t2"`) && strings.Contains(string(e.Raw), `"role":"assistant"`) {
			for _, frag := range []string{`"thinkingSignature":"sig"`, `"totalTokens":34`, `"stopReason":"toolUse"`, `"model":"claude-x"`, `"api":"anthropic-messages"`} {
				if !strings.Contains(string(e.Raw), frag) {
					t.Errorf("merged assistant lacks %s: %s", frag, e.Raw)
				}
			}
		}
	}
}

// TestEncodeCwd checks Claude Code's project directory names.
func TestEncodeCwd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"/home/user/Claude", "-home-user-Claude"},
		{`C:\Users\user`, "C--Users-user"},
		{"/a b/ü/😀", "-a-b-----"},
	} {
		if got := EncodeCwd(c.in); got != c.want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestHistoryCwd: a session file whose records name no cwd gets it from
// history.jsonl.
func TestHistoryCwd(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "history.jsonl"), `{"display":"hi","pastedContents":{},"timestamp":1,"project":"/srv/my.app"}`+"\n")
	writeFile(t, filepath.Join(home, "projects", "-srv-my-app", "s2.jsonl"),
		line(`"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}`))
	res := importtest.Import(t, Source{}, home, migrate.ImportOptions{Cwd: "/elsewhere"})
	if s := res.ByID(t, "s2"); s.Cwd != "/srv/my.app" || !s.CwdKnown {
		t.Errorf("cwd = %q (known %v), want /srv/my.app", s.Cwd, s.CwdKnown)
	}
}
