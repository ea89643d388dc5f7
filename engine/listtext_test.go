package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// TestListTextExtraction checks firstMessage and allMessagesText against
// what pi's extractTextContent and join give (the wanted values were
// printed by Node for the same JSON), including text values that are not
// strings, escapes JSON.stringify would not write, and lone surrogates,
// which JavaScript keeps and writes back as \u escapes.
func TestListTextExtraction(t *testing.T) {
	t.Parallel()
	const header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
	msg := func(id, role, content string) string {
		return `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"` + role + `","content":` + content + `,"timestamp":1767225601000}}`
	}
	cases := []struct {
		name      string
		lines     []string
		first     string
		allJSON   string // allMessagesText as JSON.stringify writes it
		wantCount int
	}{
		{
			name:    "plain strings and blocks",
			lines:   []string{msg("a", "user", `"hello \"you\"\n"`), msg("b", "assistant", `[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"t","name":"x","arguments":{}},{"type":"text","text":"done"}]`)},
			first:   "hello \"you\"\n",
			allJSON: `"hello \"you\"\n ok done"`,
		},
		{
			name:    "non-string text values as Array.prototype.join renders them",
			lines:   []string{msg("a", "assistant", `[{"type":"text","text":5e21},{"type":"text","text":[1,[2,null],{}]},{"type":"text","text":null},{"type":"text","text":"\u0041\ud800\/"},{"type":"thinking","thinking":"x"},{"type":"text","text":true}]`)},
			first:   "(no messages)",
			allJSON: `"5e+21 1,2,,[object Object]  A\ud800/ true"`,
		},
		{
			name:    "empty texts are skipped, blank joins are not",
			lines:   []string{msg("a", "user", `""`), msg("b", "user", `[{"type":"text","text":""}]`), msg("c", "user", `[{"type":"text","text":""},{"type":"text","text":""}]`), msg("d", "user", `"\u00e9t\u00e9"`)},
			first:   " ",
			allJSON: `"  été"`,
		},
		{
			name:    "a lone surrogate is written back as JavaScript writes it",
			lines:   []string{msg("a", "user", `"\ud800"`), msg("b", "user", `"\ud83d\ude00 \u001f"`)},
			first:   "\ufffd",
			allJSON: `"\ud800 😀 \u001f"`,
		},
		{
			name:    "tool results and other roles add nothing",
			lines:   []string{msg("a", "toolResult", `"out"`), msg("b", "custom", `"c"`), msg("c", "user", `"\u2028raw"`)},
			first:   "\u2028raw",
			allJSON: "\"\u2028raw\"",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(header + "\n")
			for _, l := range c.lines {
				data = append(data, l+"\n"...)
			}
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			info, err := openStore(t, engine.StoreOptions{}).Info(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if info.FirstMessage != c.first {
				t.Errorf("FirstMessage = %q, want %q", info.FirstMessage, c.first)
			}
			var want string
			if err := json.Unmarshal([]byte(c.allJSON), &want); err != nil {
				t.Fatal(err)
			}
			if got := info.AllMessagesText(); got != want {
				t.Errorf("AllMessagesText = %q, want %q", got, want)
			}
			var buf bytes.Buffer
			render.Info(&buf, info)
			var out map[string]json.RawMessage
			if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
				t.Fatalf("WriteInfo wrote invalid JSON: %v\n%s", err, buf.Bytes())
			}
			wantFirst := jsonl.AppendString(nil, c.first)
			if c.first == "\ufffd" {
				wantFirst = []byte(`"\ud800"`)
			}
			if diff := cmp.Diff(string(wantFirst), string(out["firstMessage"])); diff != "" {
				t.Errorf("firstMessage JSON differs (-pi +sessctl):\n%s", diff)
			}
			if diff := cmp.Diff(c.allJSON, string(out["allMessagesText"])); diff != "" {
				t.Errorf("allMessagesText JSON differs (-pi +sessctl):\n%s", diff)
			}
			if info.MessageCount != len(c.lines) {
				t.Errorf("MessageCount = %d, want %d", info.MessageCount, len(c.lines))
			}
		})
	}
}
