package engine_test

// Writing as pi 1.x writes: the file appears at the first user or
// assistant message, and usage entries, context edits, system messages,
// retain-none compactions (with the system message checkpoint) and branch
// summaries (with usage) are the same bytes pi's SessionManager writes
// for the same calls, ids and clock.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// TestFileCreatedAtFirstUserMessage: pi 1.x writes a new session's file
// at its first user message, so the prompt is on disk even when the first
// turn never completes (pi 0.73.1 waited for the first assistant reply).
func TestFileCreatedAtFirstUserMessage(t *testing.T) {
	t.Parallel()
	st := openStore(t, engine.StoreOptions{Sync: engine.SyncNone})
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendModelChange("p", "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(message.NewSystem("be brief", time.UnixMilli(1))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.SessionFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file exists before any user or assistant message: %v", err)
	}
	if _, err := s.AppendMessage(message.NewUser("hi", time.UnixMilli(2))); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.SessionFile())
	if err != nil {
		t.Fatalf("no file after the first user message: %v", err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 4 {
		t.Errorf("the file holds %d lines, want 4 (header, model, system, user):\n%s", n, data)
	}
}

// piCall is one SessionManager call for scripts/pi-calls.mjs; the string
// "<undefined>" stands for undefined.
type piCall []any

// TestAppendsAsPi16 makes the same calls on pi's SessionManager and on a
// Session, with the same ids and clock, and compares the files byte for
// byte; the calls pi refuses, sessctl refuses.
func TestAppendsAsPi16(t *testing.T) {
	t.Parallel()
	node, modules := testenv.Pi(t)
	if strings.HasPrefix(testenv.PiInstalled(modules), "0.") {
		t.Skip("pi before 1.0 has no usage entries, context edits or system messages")
	}
	ids := []string{"a0000001", "a0000002", "a0000003", "a0000004", "a0000005", "a0000006", "a0000007", "a0000008", "a0000009", "a000000a", "a000000b", "a000000c", "a000000d"}
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	usage := message.NewUsage(10, 5, 0, 0, message.Cost{Input: 0.00003, Output: 0.000075, Total: 0.000105})
	usage.TotalTokens = 15
	usageJSON, _ := json.Marshal(usage)
	usageAny := json.RawMessage(usageJSON)
	sys := message.NewSystem("base prompt", time.UnixMilli(5))
	sys.Sections = map[string]any{"rules": "no tables"}
	sysLater := message.NewSystem("", time.UnixMilli(6))
	sysLater.Sections = map[string]any{"rules": nil, "env": "cwd /w"}
	user := message.NewUser("hello", time.UnixMilli(7))
	asst := message.NewAssistant("anthropic-messages", "anthropic", "claude", []message.Block{message.NewText("hi there")}, usage, message.StopStop, time.UnixMilli(8))
	enc := func(m message.Message) any {
		b, _ := message.Encode(m)
		return json.RawMessage(b)
	}
	calls := []piCall{
		{"appendModelChange", "anthropic", "claude"},
		{"appendMessage", enc(sys)},
		{"appendMessage", enc(user)},                                                               // a0000003
		{"appendMessage", enc(asst)},                                                               // a0000004
		{"appendUsage", "title", "anthropic", "claude", usageAny, "session title"},                 // a0000005
		{"appendMessage", enc(sysLater)},                                                           // a0000006
		{"appendContextEdit", "a0000003", nil},                                                     // a0000007
		{"appendContextEdit", "a0000004", map[string]any{"content": "shorter"}},                    // a0000008
		{"appendContextEdit", "a0000002", map[string]any{"content": "x"}},                          // refused: a system message
		{"appendCompaction", "S", nil, 1234, json.RawMessage(`{"readFiles":[]}`), false, usageAny}, // a0000009, retain-none
		{"appendUsage", "compaction", "anthropic", "claude", usageAny, ""},                         // a000000a
		{"branchWithSummary", "a0000004", "B", "<undefined>", "<undefined>", usageAny},             // a000000b
		{"appendContextEdit", "a0000009", nil},                                                     // refused: not editable
		{"appendContextEdit", "a000000a", nil},                                                     // refused: not on the branch
		{"appendSessionInfo", "  fix\r\nthe\n\nparser  "},                                          // a000000c: line breaks become spaces
	}
	dir := t.TempDir()
	req := map[string]any{"cwd": "/w", "sessionId": "019ab000-0000-7000-8000-000000000001", "clock": start.UnixMilli(), "ids": ids, "calls": calls}
	in, _ := json.Marshal(req)
	cmd := exec.Command(node, filepath.Join(testenv.RepoRoot(t), "scripts", "pi-calls.mjs"), modules, filepath.Join(dir, "pi"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi-calls.mjs: %v\n%s", err, stderr.Bytes())
	}
	var pi struct {
		File   *string
		Errors []*string
	}
	if err := json.Unmarshal(out, &pi); err != nil || pi.File == nil {
		t.Fatalf("pi-calls.mjs printed %s (%v)", out, err)
	}
	want, err := os.ReadFile(*pi.File)
	if err != nil {
		t.Fatal(err)
	}

	next, tick := 0, start
	st := openStore(t, engine.StoreOptions{Dir: filepath.Join(dir, "sessctl"), Sync: engine.SyncNone,
		NewSessionID: func() string { return "019ab000-0000-7000-8000-000000000001" },
		NewEntryID: func() string {
			next++
			return ids[next-1]
		},
		Now: func() time.Time {
			now := tick
			tick = tick.Add(time.Second)
			return now
		}})
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tb := false
	results := []error{
		second(s.AppendModelChange("anthropic", "claude")),
		second(s.AppendMessage(sys)),
		second(s.AppendMessage(user)),
		second(s.AppendMessage(asst)),
		second(s.AppendUsage("title", "anthropic", "claude", usage, "session title")),
		second(s.AppendMessage(sysLater)),
		second(s.AppendContextEdit("a0000003", nil)),
		second(s.AppendContextEdit("a0000004", "shorter")),
		second(s.AppendContextEdit("a0000002", "x")),
		second(s.AppendCompaction(engine.Compaction{Summary: "S", RetainNone: true, TokensBefore: 1234, Details: json.RawMessage(`{"readFiles":[]}`), FromHook: &tb, Usage: usage})),
		second(s.AppendUsage("compaction", "anthropic", "claude", usage, "")),
		second(s.BranchWithSummary(engine.BranchSummary{FromID: "a0000004", Summary: "B", Usage: usage})),
		second(s.AppendContextEdit("a0000009", nil)),
		second(s.AppendContextEdit("a000000a", nil)),
		second(s.AppendSessionInfo("  fix\r\nthe\n\nparser  ")),
	}
	for i, err := range results {
		if (pi.Errors[i] != nil) != (err != nil) {
			t.Errorf("call %d %v: pi %v, sessctl %v", i, calls[i][0], strOrNil(pi.Errors[i]), err)
		}
	}
	got, err := os.ReadFile(s.SessionFile())
	if err != nil {
		t.Fatal(err)
	}
	// The file names are the same too.
	if filepath.Base(s.SessionFile()) != filepath.Base(*pi.File) {
		t.Errorf("file %s, pi's %s", filepath.Base(s.SessionFile()), filepath.Base(*pi.File))
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("line %d:\npi:      %s\nsessctl: %s", i+1, w, g)
		}
	}
}

func second(_ string, err error) error { return err }

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
