package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// fixedOptions gives sessions a fixed clock and counted ids, so two
// sessions doing the same things write the same bytes.
func fixedOptions() engine.StoreOptions {
	n := 0
	return engine.StoreOptions{
		Now:          func() time.Time { return time.UnixMilli(1772442000000) },
		NewSessionID: func() string { return "00000000-0000-4000-8000-000000000001" },
		NewEntryID: func() string {
			n++
			return fmt.Sprintf("%08x", n)
		},
		Sync: engine.SyncNone,
	}
}

func lines(s *engine.Session) []string {
	var out []string
	for _, e := range s.Entries() {
		out = append(out, string(e.Raw))
	}
	return out
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestTypedAppendAndContext appends typed messages and reads them back
// from the context as types, with the model and thinking level.
func TestTypedAppendAndContext(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1772442003123)
	typed := inMemory(t, "/p", fixedOptions())
	fromJSON := inMemory(t, "/p", fixedOptions())
	id := must[string](t)
	id(typed.AppendModelChange("anthropic", "claude-sonnet-4-5"))
	id(typed.AppendThinkingLevelChange("high"))
	user := message.NewUser("read a.go", at)
	reply := message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText("Reading."), message.NewToolCall("c1", "read", map[string]string{"path": "a.go"})},
		message.NewUsage(10, 5, 0, 0, message.Cost{Total: 0.001}), message.StopToolUse, at)
	result := message.NewToolResult("c1", "read", []message.Block{message.NewText("package a")}, false, at)
	for _, m := range []message.Message{user, reply, result} {
		id(typed.AppendMessage(m))
	}
	id(fromJSON.AppendModelChange("anthropic", "claude-sonnet-4-5"))
	id(fromJSON.AppendThinkingLevelChange("high"))
	for _, m := range []string{
		`{"role":"user","content":"read a.go","timestamp":1772442003123}`,
		`{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.001}},"stopReason":"toolUse","timestamp":1772442003123}`,
		`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"package a"}],"isError":false,"timestamp":1772442003123}`,
	} {
		// The JSON as pi writes it: the typed message's bytes are these.
		if got := lines(typed)[len(lines(fromJSON))]; !strings.Contains(got, `"message":`+m+`}`) {
			t.Errorf("typed append wrote\n%s\nwant the message\n%s", got, m)
		}
		id(fromJSON.AppendMessage(raw(m)))
	}
	if diff := cmp.Diff(lines(fromJSON), lines(typed)); diff != "" {
		t.Errorf("typed appends wrote other bytes than the JSON (-json +typed):\n%s", diff)
	}

	c := typed.Context()
	model, ok := c.CurrentModel()
	if !ok || model != (compaction.Model{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}) || c.Thinking() != "high" {
		t.Errorf("model %+v %v, thinking %q", model, ok, c.Thinking())
	}
	msgs, err := c.TypedMessages()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	got := msgs[1].(*message.Assistant)
	if got.Usage.TotalTokens != 15 || got.Content[1].(*message.ToolCall).Name != "read" || got.StopReason != message.StopToolUse {
		t.Errorf("assistant read back as %+v", got)
	}
	if u := msgs[0].(*message.User); u.Content.String() != "read a.go" {
		t.Errorf("user content %q", u.Content.String())
	}
	empty := inMemory(t, "/p", fixedOptions()).Context()
	if _, ok := empty.CurrentModel(); ok || empty.Thinking() != "off" {
		t.Errorf("empty context: model set %v, thinking %q", ok, empty.Thinking())
	}
}

// TestCompactionDetailsKeys checks that compaction results land in
// entries with pi's detail keys, however the caller passes them; the keys
// are also read from pi's own compaction entry in the corpus.
func TestCompactionDetailsKeys(t *testing.T) {
	t.Parallel()
	details := compaction.FileLists{ReadFiles: []string{"src/a.ts"}, ModifiedFiles: []string{"src/b.ts"}}
	res := compaction.Result{Summary: "s", FirstKeptEntryID: "00000001", TokensBefore: 12, Details: details}
	const want = `{"readFiles":["src/a.ts"],"modifiedFiles":["src/b.ts"]}`
	for _, tc := range []struct {
		name   string
		append func(s *engine.Session) (string, error)
		hook   string
	}{
		{"Compaction.Details", func(s *engine.Session) (string, error) {
			return s.AppendCompaction(engine.Compaction{Summary: "s", FirstKeptEntryID: "00000001", TokensBefore: 12, Details: res.Details})
		}, ""},
		{"compaction.Result, as pi's agent appends it", func(s *engine.Session) (string, error) {
			no := false
			return s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
				TokensBefore: res.TokensBefore, Details: res.Details, FromHook: &no})
		}, `false`},
		{"compaction.BranchResult, as pi's agent appends it", func(s *engine.Session) (string, error) {
			br, no := compaction.BranchResult{Summary: "s", Details: details}, false
			return s.BranchWithSummary(engine.BranchSummary{FromID: "00000001", Summary: br.Summary, Details: br.Details, FromHook: &no})
		}, `false`},
		{"BranchSummary.Details", func(s *engine.Session) (string, error) {
			yes := true
			return s.BranchWithSummary(engine.BranchSummary{FromID: "00000001", Summary: "s", Details: details, FromHook: &yes})
		}, `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := inMemory(t, "/p", fixedOptions())
			must[string](t)(s.AppendMessage(message.NewUser("hi", time.UnixMilli(1))))
			id := must[string](t)(tc.append(s))
			e, _ := s.Entry(id)
			got, _ := e.Field("details")
			if string(got) != want {
				t.Errorf("details %s, want pi's %s", got, want)
			}
			hook, ok := e.Field("fromHook")
			if string(hook) != tc.hook || ok != (tc.hook != "") {
				t.Errorf("fromHook %s (present %v), want %q", hook, ok, tc.hook)
			}
		})
	}
	// pi's own compaction entry: the same keys in the same order.
	data, err := os.ReadFile(filepath.Join(testenv.Corpus(t, "pi"), "cases", "compaction", "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	jsonl.EachEntry(data, func(e *jsonl.Entry, _ *jsonl.MessageMembers) bool {
		if d, ok := e.Field("details"); ok && e.Type == jsonl.TypeCompaction && keys == nil {
			_ = jsonl.Members(d, func(m *jsonl.Member) bool {
				keys = append(keys, m.KeyString())
				return true
			})
		}
		return true
	})
	if diff := cmp.Diff([]string{"readFiles", "modifiedFiles"}, keys); diff != "" {
		t.Errorf("pi's compaction details keys changed (-ours +pi):\n%s", diff)
	}
}

// TestOptionalArguments checks how pi's optional arguments are written:
// a label set, and cleared ("" writes no label member, as pi's own agent
// clears one); a branch summary at an entry with nothing optional, and
// at the root with details and fromHook; a compaction's fromHook.
func TestOptionalArguments(t *testing.T) {
	t.Parallel()
	yes, target := true, "00000001"
	for _, tc := range []struct {
		name   string
		append func(s *engine.Session) (string, error)
		want   string // the members after the envelope
	}{
		{"set label", func(s *engine.Session) (string, error) { return s.AppendLabelChange(target, "x") },
			`,"targetId":"00000001","label":"x"}`},
		{"clear label", func(s *engine.Session) (string, error) { return s.AppendLabelChange(target, "") },
			`,"targetId":"00000001"}`},
		{"branch to id", func(s *engine.Session) (string, error) {
			return s.BranchWithSummary(engine.BranchSummary{FromID: target, Summary: "s"})
		}, `,"fromId":"00000001","summary":"s"}`},
		{"branch to root with hook", func(s *engine.Session) (string, error) {
			return s.BranchWithSummary(engine.BranchSummary{Summary: "s", Details: map[string]int{"n": 1}, FromHook: &yes})
		}, `,"fromId":"00000001","summary":"s","details":{"n":1},"fromHook":true}`}, // the leaf left (pi 1.x)
		{"compaction hook", func(s *engine.Session) (string, error) {
			return s.AppendCompaction(engine.Compaction{Summary: "s", FirstKeptEntryID: target, FromHook: &yes})
		}, `,"summary":"s","firstKeptEntryId":"00000001","tokensBefore":0,"fromHook":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := inMemory(t, "/p", fixedOptions())
			must[string](t)(s.AppendMessage(message.NewUser("hi", time.UnixMilli(1))))
			id := must[string](t)(tc.append(s))
			e, _ := s.Entry(id)
			if !strings.HasSuffix(string(e.Raw), tc.want) {
				t.Errorf("wrote %s, want it to end %s", e.Raw, tc.want)
			}
			if tc.name == "branch to root with hook" && (e.ParentKind != engine.KindNull) {
				t.Errorf("a branch summary at the root has parentId %v", e.ParentKind)
			}
		})
	}
}

// TestCustomMessageContent passes message.Content to
// AppendCustomMessageEntry: a string or blocks, as pi writes them.
func TestCustomMessageContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content message.Content
		want    string
	}{
		{message.Text("CI passed"), `"CI passed"`},
		{message.Blocks(message.NewText("CI "), message.NewImage("iVBO", "image/png")), `[{"type":"text","text":"CI "},{"type":"image","data":"iVBO","mimeType":"image/png"}]`},
	} {
		s := inMemory(t, "/p", fixedOptions())
		id := must[string](t)(s.AppendCustomMessageEntry("ci", tc.content, true, nil))
		e, _ := s.Entry(id)
		if got, _ := e.Field("content"); string(got) != tc.want {
			t.Errorf("content %s, want %s", got, tc.want)
		}
		msgs, err := s.Context().TypedMessages()
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := msgs[0].(*message.Custom); !ok || c.CustomType != "ci" || !c.Display {
			t.Errorf("context message %#v", msgs[0])
		}
	}
}
