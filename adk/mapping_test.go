package adk

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/internal/testenv"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// conversation returns the events of a turn with a tool: a prompt with an
// image, a model's thought, text and function call with usage, the
// function's response, a state change without content, a model part pi
// has no block for, and the model's answer.
func conversation() []*session.Event {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ev := func(i int, author string, c *genai.Content) *session.Event {
		return &session.Event{
			ID: "ev" + string(rune('a'+i)), InvocationID: "inv1", Author: author, Branch: "root.helper",
			Timestamp: at.Add(time.Duration(i) * time.Second),
			Actions:   session.EventActions{StateDelta: map[string]any{}},
			LLMResponse: model.LLMResponse{
				Content: c,
			},
		}
	}
	prompt := ev(0, "user", &genai.Content{Role: "user", Parts: []*genai.Part{
		{Text: "what is the weather in Paris? here is a map"},
		{InlineData: &genai.Blob{Data: []byte("\x89PNG..."), MIMEType: "image/png"}},
	}})
	call := ev(1, "helper", &genai.Content{Role: "model", Parts: []*genai.Part{
		{Text: "the user wants the weather", Thought: true, ThoughtSignature: []byte("sig1")},
		{Text: "Let me look that up."},
		{FunctionCall: &genai.FunctionCall{ID: "call1", Name: "weather", Args: map[string]any{"city": "Paris", "days": float64(2)}}, ThoughtSignature: []byte("sig2")},
	}})
	call.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 120, CachedContentTokenCount: 20, CandidatesTokenCount: 30, ThoughtsTokenCount: 10, TotalTokenCount: 160}
	call.ModelVersion = "gemini-2.5-flash"
	call.LongRunningToolIDs = []string{"call1"}
	resp := ev(2, "helper", &genai.Content{Role: "user", Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{ID: "call1", Name: "weather", Response: map[string]any{"forecast": "sun", "high": float64(21)}}},
		{FunctionResponse: &genai.FunctionResponse{ID: "call2", Name: "clock", Response: map[string]any{"error": "no clock"}}},
	}})
	resp.Actions.SkipSummarization = true
	state := ev(3, "helper", nil)
	state.Actions.StateDelta = map[string]any{"city": "Paris", "user:units": "metric"}
	state.Actions.TransferToAgent = "root"
	code := ev(4, "root", &genai.Content{Role: "model", Parts: []*genai.Part{
		{Text: "computing"},
		{ExecutableCode: &genai.ExecutableCode{Code: "print(21)", Language: genai.LanguagePython}},
	}})
	answer := ev(5, "root", genai.NewContentFromText("Sunny, 21°C <b>&</b>.", "model"))
	answer.TurnComplete = true
	answer.CustomMetadata = map[string]any{"k": "v"}
	return []*session.Event{prompt, call, resp, state, code, answer}
}

// TestEventsRoundTrip: Get gives back every field of the events appended,
// and an event's content is kept once (as pi messages) where pi has
// blocks for all of it, twice only where it has not.
func TestEventsRoundTrip(t *testing.T) {
	ctx := t.Context()
	s := newTestService(t, t.TempDir())
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "weather", UserID: "ann", SessionID: "s1", State: map[string]any{"lang": "fr"}})
	if err != nil {
		t.Fatal(err)
	}
	want := conversation()
	for _, ev := range want {
		if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, &session.GetRequest{AppName: "weather", UserID: "ann", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var gotEvents []*session.Event
	for ev := range got.Session.Events().All() {
		gotEvents = append(gotEvents, ev)
	}
	if diff := cmp.Diff(want, gotEvents); diff != "" {
		t.Errorf("events (-appended +got):\n%s", diff)
	}
	wantState := map[string]any{"lang": "fr", "city": "Paris", "user:units": "metric"}
	gotState := map[string]any{}
	for k, v := range got.Session.State().All() {
		gotState[k] = v
	}
	if diff := cmp.Diff(wantState, gotState); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}

	// The file: one entry per pi message, the content in "adk" only for
	// the event with executable code.
	path, err := s.find(key{"weather", "ann", "s1"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	withContent := 0
	var roles []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n"))[1:] {
		var e struct {
			Type    string
			Message struct {
				Role string
				Adk  map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "message" {
			roles = append(roles, e.Message.Role)
			if _, ok := e.Message.Adk["content"]; ok {
				withContent++
			}
		} else {
			roles = append(roles, e.Type)
		}
	}
	wantRoles := []string{"custom", "user", "assistant", "toolResult", "toolResult", "custom", "assistant", "assistant"}
	if diff := cmp.Diff(wantRoles, roles); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if withContent != 1 {
		t.Errorf("%d events keep their content twice, want 1 (the one with executable code)", withContent)
	}
}

// TestPiOpensAdapterSessions: pi itself opens a session the adapter wrote
// and builds the model context the mapping promises: the prompt with its
// image, the model's thinking, text and tool call with usage, both tool
// results, and the answers. It runs the reference pi (1.6.0) and the
// release the corpus was recorded with (0.58.3).
func TestPiOpensAdapterSessions(t *testing.T) {
	node, modules := testenv.Pi(t)
	ctx := t.Context()
	dir := t.TempDir()
	s := newTestService(t, dir)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "weather", UserID: "ann", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range conversation() {
		if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	path, err := s.find(key{"weather", "ann", "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("reference", func(t *testing.T) {
		checkPiContext(t, node, testenv.PiPackageDir(modules), path)
	})
	t.Run("corpus", func(t *testing.T) {
		node, modules := testenv.PiCorpus(t)
		checkPiContext(t, node, testenv.PiPackageDir(modules), path)
	})
}

func checkPiContext(t *testing.T, node, pkg, path string) {
	out, err := exec.Command(node, filepath.Join("testdata", "pi-context.mjs"), pkg, path).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("pi-context.mjs: %v\n%s", err, stderr)
	}
	var answer struct {
		Version  string
		Sessions map[string]struct {
			SessionID string
			Context   struct {
				Messages []struct {
					Role       string
					Content    json.RawMessage
					Model      string
					StopReason string
					ToolCallID string
					IsError    bool
					Usage      struct{ Input, Output, CacheRead, TotalTokens int }
				}
			}
		}
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatal(err)
	}
	st, ok := answer.Sessions[path]
	if !ok {
		t.Fatalf("pi %s gave no context for %s", answer.Version, path)
	}
	t.Logf("pi %s", answer.Version)
	if st.SessionID != "s1" {
		t.Errorf("pi's session id %q, want s1", st.SessionID)
	}
	type block struct {
		Type, Text, Thinking, ThinkingSignature, Name, ID, MimeType string
	}
	type msg struct {
		Role, Model, StopReason, ToolCallID string
		IsError                             bool
		Blocks                              []block
	}
	var got []msg
	for _, m := range st.Context.Messages {
		var bs []block
		_ = json.Unmarshal(m.Content, &bs)
		got = append(got, msg{m.Role, m.Model, m.StopReason, m.ToolCallID, m.IsError, bs})
	}
	want := []msg{
		{Role: "user", Blocks: []block{{Type: "text", Text: "what is the weather in Paris? here is a map"}, {Type: "image", MimeType: "image/png"}}},
		{Role: "assistant", Model: "gemini-2.5-flash", StopReason: "toolUse", Blocks: []block{
			{Type: "thinking", Thinking: "the user wants the weather", ThinkingSignature: "c2lnMQ=="},
			{Type: "text", Text: "Let me look that up."},
			{Type: "toolCall", ID: "call1", Name: "weather"},
		}},
		{Role: "toolResult", ToolCallID: "call1", Blocks: []block{{Type: "text", Text: `{"forecast":"sun","high":21}`}}},
		{Role: "toolResult", ToolCallID: "call2", IsError: true, Blocks: []block{{Type: "text", Text: `{"error":"no clock"}`}}},
		{Role: "assistant", Model: "adk", StopReason: "stop", Blocks: []block{{Type: "text", Text: "computing"}}},
		{Role: "assistant", Model: "adk", StopReason: "stop", Blocks: []block{{Type: "text", Text: "Sunny, 21°C <b>&</b>."}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pi %s's context (-want +got):\n%s", answer.Version, diff)
	}
	if len(st.Context.Messages) > 1 {
		u := st.Context.Messages[1].Usage
		if u.Input != 100 || u.Output != 40 || u.CacheRead != 20 || u.TotalTokens != 160 {
			t.Errorf("pi %s's usage %+v, want input 100, output 40, cacheRead 20, total 160", answer.Version, u)
		}
	}
}
