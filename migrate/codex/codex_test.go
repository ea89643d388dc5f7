package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// expected reads a rollout independently of the importer: every user
// message Codex did not inject, one assistant message per run of
// assistant items (its output text and call ids), one toolResult per
// output.
func expected(t *testing.T, path string) []importtest.Msg {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []importtest.Msg
	inRun := false
	var runText []string
	flush := func() {
		if inRun {
			out[len(out)-1].Text = strings.Join(runText, "\n")
		}
		inRun, runText = false, nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		it := l
		if p, ok := l["payload"].(map[string]any); ok {
			if l["type"] != "response_item" {
				continue
			}
			it = p
		}
		switch it["type"] {
		case "message":
			parts, _ := it["content"].([]any)
			var texts []string
			injected := false
			for _, p := range parts {
				text := p.(map[string]any)["text"].(string)
				texts = append(texts, text)
				for _, pre := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>"} {
					if strings.HasPrefix(strings.TrimSpace(text), pre) {
						injected = true
					}
				}
			}
			switch it["role"] {
			case "user":
				if !injected {
					flush()
					out = append(out, importtest.Msg{Role: "user", Text: strings.Join(texts, "\n")})
				}
			case "assistant":
				if !inRun {
					out = append(out, importtest.Msg{Role: "assistant"})
					inRun = true
				}
				runText = append(runText, texts...)
			}
		case "reasoning", "function_call":
			if !inRun {
				out = append(out, importtest.Msg{Role: "assistant"})
				inRun = true
			}
			if it["type"] == "function_call" {
				out[len(out)-1].ToolCalls = append(out[len(out)-1].ToolCalls, it["call_id"].(string))
			}
		case "function_call_output":
			flush()
			out = append(out, importtest.Msg{Role: "toolResult", ToolCallID: it["call_id"].(string), Text: it["output"].(string)})
		}
	}
	flush()
	return out
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	root := importtest.Corpus(t, "codex")
	cases := []struct {
		dir, id, cwd, version, model string
	}{
		{"legacy-2025-09", "0006b370-3ba0-4783-b4ad-22ce45b53420", "/Users/user/Dev/Chatgpt-Apps/Intel", "", ""},
		{"cli-0.98.0", "019c372e-2526-7e72-83e1-9cba8efad18d", "/Users/user/dotfiles", "0.98.0", "gpt-5.3-codex"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.dir] = true
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(root, c.dir, "codex-home")
			opts := migrate.ImportOptions{Cwd: "/fallback"}
			res := importtest.Import(t, Source{}, home, opts)
			if len(res.Damage) > 0 || len(res.Sessions) != 1 {
				t.Fatalf("damage %v, %d sessions", res.Damage, len(res.Sessions))
			}
			s := res.ByID(t, c.id)
			if s.Cwd != c.cwd || !s.CwdKnown || s.SourceVersion != c.version {
				t.Errorf("cwd %q version %q, want %q %q", s.Cwd, s.SourceVersion, c.cwd, c.version)
			}
			l := importtest.Load(t, s, "")
			got := l.Messages()
			files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
			if diff := cmp.Diff(expected(t, files[0]), got); diff != "" {
				t.Errorf("context (-source +imported):\n%s", diff)
			}
			importtest.CheckToolPairs(t, c.id, got)
			if c.model != "" && !strings.Contains(string(l.Context.Model), c.model) {
				t.Errorf("context model %s, want %s", l.Context.Model, c.model)
			}
			importtest.CheckReimport(t, Source{}, home, opts, res)
		})
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() && !seen[e.Name()] {
			t.Run(e.Name(), func(t *testing.T) {
				t.Parallel()
				res := importtest.Import(t, Source{}, filepath.Join(root, e.Name(), "codex-home"), migrate.ImportOptions{})
				for _, s := range res.Sessions {
					importtest.CheckToolPairs(t, s.SourceID, importtest.Load(t, s, "").Messages())
				}
			})
		}
	}
}

// TestRollout covers what the corpus does not: parallel calls, usage,
// failures, an aborted turn, compaction, web search, the event fallback,
// a subagent's parent and a damaged line.
func TestRollout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "sessions", "2026", "01", "02", "rollout-2026-01-02T10-00-00-11111111-2222-3333-4444-555555555555.jsonl")
	lines := []string{
		`{"timestamp":"2026-01-02T10:00:00.000Z","type":"session_meta","payload":{"id":"11111111-2222-3333-4444-555555555555","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w","cli_version":"0.99.0","model_provider":"azure","source":{"subagent":{"thread_spawn":{"parent_thread_id":"99999999-0000-0000-0000-000000000000","depth":1}}}}}`,
		`{"timestamp":"2026-01-02T10:00:01.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-x","effort":"high"}}`,
		`{"timestamp":"2026-01-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run two"}]}}`,
		`{"timestamp":"2026-01-02T10:00:02.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"xyz"}}`,
		`{"timestamp":"2026-01-02T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"{\"cmd\":\"a\"}","call_id":"c1"}}`,
		`{"timestamp":"2026-01-02T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"not json","call_id":"c2"}}`,
		`{"timestamp":"2026-01-02T10:00:03.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10,"reasoning_output_tokens":5,"total_tokens":110}}}}`,
		`{"timestamp":"2026-01-02T10:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 0\nok"}}`,
		`{"timestamp":"2026-01-02T10:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Process exited with code 2\nboom"}}`,
		`not json at all`,
		`{"timestamp":"2026-01-02T10:00:04.000Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"go"}}}`,
		`{"timestamp":"2026-01-02T10:00:05.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`,
		`{"timestamp":"2026-01-02T10:00:06.000Z","type":"compacted","payload":{"message":"summary of it"}}`,
		`{"timestamp":"2026-01-02T10:00:07.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>\nx\n</turn_aborted>"}]}}`,
		`{"timestamp":"2026-01-02T10:00:07.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"partial"}]}}`,
		`{"timestamp":"2026-01-02T10:00:08.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`,
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, dir, migrate.ImportOptions{})
	if len(res.Damage) != 1 || res.Damage[0].Line != 10 || res.Damage[0].Path != file {
		t.Fatalf("damage %v, want line 10 of %s", res.Damage, file)
	}
	s := res.ByID(t, "11111111-2222-3333-4444-555555555555")
	if s.ParentSourceID != "99999999-0000-0000-0000-000000000000" {
		t.Errorf("parent %q", s.ParentSourceID)
	}
	l := importtest.Load(t, s, "")
	got := l.Messages()
	want := []importtest.Msg{
		{Role: "compactionSummary", Text: "summary of it"},
		{Role: "assistant", Text: "partial"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context after compaction (-want +got):\n%s", diff)
	}
	var text []string
	for _, e := range l.Entries {
		text = append(text, string(e.Raw))
	}
	all := strings.Join(text, "\n")
	for _, frag := range []string{
		`"type":"model_change"`, `"provider":"azure","modelId":"gpt-x"`, `"thinkingLevel":"high"`,
		`"arguments":{"cmd":"a"}`, `"arguments":{"input":"not json"}`,
		`"usage":{"input":60,"output":10,"cacheRead":40,"cacheWrite":0,"totalTokens":110`,
		`"toolCallId":"c2","toolName":"exec","content":[{"type":"text","text":"Process exited with code 2\nboom"}],"isError":true`,
		`"toolCallId":"c1","toolName":"exec","content":[{"type":"text","text":"Process exited with code 0\nok"}],"isError":false`,
		`"thinking":"plan","thinkingSignature":"{\"type\":\"reasoning\"`,
		`"toolName":"web_search"`, `"stopReason":"aborted"`,
	} {
		if !strings.Contains(all, frag) {
			t.Errorf("imported file lacks %s", frag)
		}
	}
	// The whole branch, compaction aside, in order.
	var full []importtest.Msg
	for _, e := range l.Index.Branch(l.Entries[len(l.Entries)-1].ID) {
		if m, ok := e.Field("message"); ok {
			full = append(full, importtest.Reduce(m))
		}
	}
	importtest.CheckToolPairs(t, "rollout", full)
}

// TestEventFallback: a rollout without message items is read from its
// user_message and agent_message events.
func TestEventFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "rollout-2026-01-02T10-00-00-abc.jsonl")
	data := `{"timestamp":"2026-01-02T10:00:00.000Z","type":"session_meta","payload":{"id":"abc","cwd":"/w"}}
{"timestamp":"2026-01-02T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}
{"timestamp":"2026-01-02T10:00:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"hi there"}}
`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res := importtest.Import(t, Source{}, file, migrate.ImportOptions{})
	got := importtest.Load(t, res.ByID(t, "abc"), "").Messages()
	want := []importtest.Msg{{Role: "user", Text: "hello"}, {Role: "assistant", Text: "hi there"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
