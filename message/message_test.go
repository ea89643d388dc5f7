package message_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/message"
)

var at = time.UnixMilli(1772442003123)

func encode(t *testing.T, m message.Message) string {
	t.Helper()
	b, err := message.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConstructorsWritePisBytes checks each constructor against the
// object pi builds, key order included (pi-ai's providers and agent loop,
// pi's agent-session and messages.ts).
func TestConstructorsWritePisBytes(t *testing.T) {
	t.Parallel()
	usage := message.NewUsage(10, 5, 0, 0, message.Cost{Input: 0.00003, Output: 0.000075, Total: 0.000105})
	failed := message.NewAssistant("openai-responses", "openai", "gpt-5", nil, usage, message.StopError, at)
	failed.ErrorMessage = "429 <rate> & limit"
	cancelled := &message.BashExecution{Command: "sleep 9", Cancelled: true, Timestamp: 1}
	full := message.NewBashExecution("npm test", "...", 1, at)
	full.Truncated, full.FullOutputPath, full.ExcludeFromContext = true, "bash-output-0001.log", true
	result := message.NewToolResult("call_1", "bash", []message.Block{message.NewText("ok")}, false, at)
	result.Details = map[string]int{"exitCode": 0}
	thinking := message.NewThinking("")
	thinking.ThinkingSignature, thinking.Redacted = "OPAQUE", true
	call := message.NewToolCall("c1", "read", struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}{"a.go", 50})
	call.ThoughtSignature = "sig"
	custom := message.NewCustom("note", message.Text("hi"), true, at)
	custom.Details = json.RawMessage(`{"b": 1, "a": [1.0]}`)
	for _, tc := range []struct {
		name string
		msg  message.Message
		want string
	}{
		{"user string", message.NewUser("hi\u2028<b>", at), `{"role":"user","content":"hi` + "\u2028" + `<b>","timestamp":1772442003123}`},
		{"user blocks", message.NewUserBlocks(at, message.NewText("look"), message.NewImage("iVBO", "image/png")),
			`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBO","mimeType":"image/png"}],"timestamp":1772442003123}`},
		{"user empty", message.NewUser("", at), `{"role":"user","content":"","timestamp":1772442003123}`},
		{"assistant", message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
			[]message.Block{thinking, message.NewText("done"), call}, usage, message.StopToolUse, at),
			`{"role":"assistant","content":[{"type":"thinking","thinking":"","thinkingSignature":"OPAQUE","redacted":true},{"type":"text","text":"done"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go","limit":50},"thoughtSignature":"sig"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.00003,"output":0.000075,"cacheRead":0,"cacheWrite":0,"total":0.000105}},"stopReason":"toolUse","timestamp":1772442003123}`},
		{"assistant error", failed,
			`{"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.00003,"output":0.000075,"cacheRead":0,"cacheWrite":0,"total":0.000105}},"stopReason":"error","errorMessage":"429 <rate> & limit","timestamp":1772442003123}`},
		{"tool call without arguments", &message.Assistant{Content: []message.Block{message.NewToolCall("s", "screenshot", nil)}, StopReason: message.StopToolUse},
			`{"role":"assistant","content":[{"type":"toolCall","id":"s","name":"screenshot","arguments":{}}],"api":"","provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":0}`},
		{"tool result", result, `{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"ok"}],"details":{"exitCode":0},"isError":false,"timestamp":1772442003123}`},
		{"bash", message.NewBashExecution("git status", "", 0, at), `{"role":"bashExecution","command":"git status","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1772442003123}`},
		{"bash cancelled", cancelled, `{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":false,"timestamp":1}`},
		{"bash full", full, `{"role":"bashExecution","command":"npm test","output":"...","exitCode":1,"cancelled":false,"truncated":true,"fullOutputPath":"bash-output-0001.log","timestamp":1772442003123,"excludeFromContext":true}`},
		{"custom", custom, `{"role":"custom","customType":"note","content":"hi","display":true,"details":{"b":1,"a":[1]},"timestamp":1772442003123}`},
		{"branch summary", &message.BranchSummary{Summary: "s", FromID: "root", Timestamp: 5}, `{"role":"branchSummary","summary":"s","fromId":"root","timestamp":5}`},
		{"compaction summary", &message.CompactionSummary{Summary: "s", TokensBefore: 1234.5, Timestamp: 5}, `{"role":"compactionSummary","summary":"s","tokensBefore":1234.5,"timestamp":5}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, encode(t, tc.msg)); diff != "" {
				t.Errorf("encoding (-pi +got):\n%s", diff)
			}
		})
	}
}

// TestReadModifyWriteKeepsUnknown checks that members a newer pi adds,
// values a Go field cannot hold, and the order members were read in
// survive a decode, a change and an encode.
func TestReadModifyWriteKeepsUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		in     string
		change func(m message.Message)
		want   string
	}{
		{"new members stay in place", `{"role":"assistant","content":[{"type":"text","text":"a","citations":[1]}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"reasoning":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"r1"}`,
			func(m message.Message) {
				a := m.(*message.Assistant)
				a.Content[0].(*message.TextContent).Text = "b"
				a.Usage.Output = 9
			},
			`{"role":"assistant","content":[{"type":"text","text":"b","citations":[1]}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"reasoning":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"r1"}`},
		{"a system message (pi-ai 1.x) decodes as System", `{"role":"system","content":"be brief","sections":{"rules":"no tables","env":null},"toolsAdded":[{"name":"read"}],"timestamp":1}`,
			func(m message.Message) { m.(*message.System).Content = message.Text("be terse") },
			`{"role":"system","content":"be terse","sections":{"rules":"no tables","env":null},"toolsAdded":[{"name":"read"}],"timestamp":1}`},
		{"order as read", `{"timestamp":1,"content":"x","role":"user"}`,
			func(m message.Message) { m.(*message.User).Content = message.Text("y") },
			`{"timestamp":1,"content":"y","role":"user"}`},
		{"error message after timestamp (pi-ai providers)", `{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":1,"errorMessage":"boom"}`,
			func(m message.Message) { m.(*message.Assistant).ErrorMessage = "bang" },
			`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":1,"errorMessage":"bang"}`},
		{"old usage without totalTokens stays without", `{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`,
			nil,
			`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`},
		{"null exit code", `{"role":"bashExecution","command":"c","output":"","exitCode":null,"cancelled":true,"truncated":false,"timestamp":1}`,
			func(m message.Message) { m.(*message.BashExecution).Output = "o" },
			`{"role":"bashExecution","command":"c","output":"o","exitCode":null,"cancelled":true,"truncated":false,"timestamp":1}`},
		{"value a field cannot hold", `{"role":"user","content":"\ud800 lone","timestamp":1.5}`, nil,
			`{"role":"user","content":"\ud800 lone","timestamp":1.5}`},
		{"numbers and escapes normalised as JSON.stringify does", `{"role":"user","content":"\u0041\/","timestamp":1.0e3, "x" : 1E2}`, nil,
			`{"role":"user","content":"A/","timestamp":1000,"x":100}`},
		{"duplicate keys: first place, last value", `{"role":"user","content":"a","timestamp":1,"content":"b"}`, nil,
			`{"role":"user","content":"b","timestamp":1}`},
		{"array-index keys first", `{"role":"user","content":"a","timestamp":1,"7":0,"1":0}`, nil,
			`{"1":0,"7":0,"role":"user","content":"a","timestamp":1}`},
		{"unknown block kept", `{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"audio","data":"x"},{"type":"text","text":"t"}],"isError":false,"timestamp":1}`,
			func(m message.Message) { m.(*message.ToolResult).IsError = true },
			`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"audio","data":"x"},{"type":"text","text":"t"}],"isError":true,"timestamp":1}`},
		{"unknown role kept", `{"role":"hookMessage","x":1.0}`, nil, `{"role":"hookMessage","x":1}`},
		{"extra set", `{"role":"user","content":"a","timestamp":1}`,
			func(m message.Message) { m.(*message.User).SetExtra("origin", json.RawMessage(`"cli"`)) },
			`{"role":"user","content":"a","timestamp":1,"origin":"cli"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := message.Decode([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(m)
			}
			if diff := cmp.Diff(tc.want, encode(t, m)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTyped(t *testing.T) {
	t.Parallel()
	m, err := message.Decode([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a"}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.5,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"toolUse","timestamp":7}`))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := m.(*message.Assistant)
	if !ok {
		t.Fatalf("decoded %T", m)
	}
	call := a.Content[0].(*message.ToolCall)
	got := []any{a.Provider, a.Model, a.StopReason, a.Usage.TotalTokens, a.Usage.Cost.Total, a.Timestamp, call.Name, string(call.Arguments.(json.RawMessage))}
	want := []any{"p", "m", message.StopToolUse, int64(10), 0.5, int64(7), "read", `{"path":"a"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	for _, bad := range []string{`[]`, `"x"`, `{"role":`, ``} {
		if _, err := message.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}
