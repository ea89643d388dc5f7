package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureCwd is the working directory recorded in the fixture sessions.
const fixtureCwd = "/home/dev/parser"

// fixtureClock returns a clock that starts at start and moves one second
// forward on every call, as the pi corpus's fake clock does.
func fixtureClock(start time.Time) func() time.Time {
	n := 0
	return func() time.Time {
		t := start.Add(time.Duration(n) * time.Second)
		n++
		return t
	}
}

// fixtureIDs returns entry ids e0000001, e0000002, ... with a prefix.
func fixtureIDs(prefix string) func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("%s%07x", prefix, n)
	}
}

func fixtureOptions(dir, sessionID, idPrefix string, start time.Time) engine.StoreOptions {
	return engine.StoreOptions{
		Dir:          dir,
		Now:          fixtureClock(start),
		NewEntryID:   fixtureIDs(idPrefix),
		NewSessionID: func() string { return sessionID },
		Sync:         engine.SyncNone,
	}
}

// tinyPNG is a 1x1 PNG.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func assistantMsg(provider, model string, content string, in, out, cacheRead int, costTotal float64, stop string, ts int64) message.Message {
	return rawMessage(fmt.Sprintf(`{"role":"assistant","content":%s,"api":"anthropic-messages","provider":%q,"model":%q,"usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%v}},"stopReason":%q,"timestamp":%d}`,
		content, provider, model, in, out, cacheRead, in+out+cacheRead, costTotal, stop, ts))
}

// buildFixtures writes the sessions the golden tests read into dir and
// returns the path of the main one. The main session has every kind of
// entry: model and thinking level changes, a user message with an image,
// assistant turns with thinking, tool calls and usage from two models, tool
// results (one an error), a label, a branch left with a summary, a
// compaction, a custom message, a custom entry, a shell command, a secret
// to redact and a name.
func buildFixtures(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s, err := openStore(t, fixtureOptions(dir, "5e55c71d-0000-4000-8000-000000000001", "e", start)).Create(ctx, fixtureCwd, engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms := start.UnixMilli()
	must := func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	must(s.AppendModelChange("anthropic", "claude-sonnet-4-5"))
	must(s.AppendThinkingLevelChange("medium"))
	q1 := must(s.AppendMessage(rawMessage(`{"role":"user","content":[{"type":"text","text":"The parser rejects CRLF input. Here is the failing screenshot."},{"type":"image","data":"` + tinyPNG + `","mimeType":"image/png"}],"timestamp":` + fmt.Sprint(ms+2000) + `}`)))
	must(s.AppendMessage(assistantMsg("anthropic", "claude-sonnet-4-5",
		`[{"type":"thinking","thinking":"The scanner probably splits on \\n only.\nCheck scan.go first.\nThen the tests."},{"type":"text","text":"Let me look at the scanner."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"grep -n 'Split' layout/scan.go","timeout":30}}]`,
		1200, 80, 0, 0.0048, "toolUse", ms+3000)))
	must(s.AppendMessage(rawMessage(`{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"layout/scan.go:41: lines := bytes.Split(data, nl)\nlayout/scan.go:42: for _, l := range lines {\nlayout/scan.go:43:   if len(l) == 0 {\nlayout/scan.go:44:     continue\nlayout/scan.go:45:   }\nlayout/scan.go:46:   parse(l)\nexport OPENAI_API_KEY=sk-proj-Abc123Def456Ghi789Jkl0\n"}],"isError":false,"timestamp":` + fmt.Sprint(ms+4000) + `}`)))
	cause := must(s.AppendMessage(assistantMsg("anthropic", "claude-sonnet-4-5",
		`[{"type":"text","text":"Lines keep their trailing \\r, so the JSON parser sees garbage.\n\nI can strip it in parse()."}]`,
		1500, 40, 1000, 0.0061, "stop", ms+5000)))
	must(s.AppendLabelChange(cause, "root cause"))
	// Try a second approach from the first question, then come back.
	must(s.AppendMessage(rawMessage(`{"role":"user","content":"Try rewriting the scanner with bufio.Scanner instead.","timestamp":` + fmt.Sprint(ms+7000) + `}`)))
	must(s.AppendMessage(assistantMsg("anthropic", "claude-sonnet-4-5",
		`[{"type":"toolCall","id":"call_2","name":"edit","arguments":{"path":"layout/scan.go","old":"bytes.Split","new":"bufio.NewScanner"}}]`,
		900, 60, 0, 0.0036, "toolUse", ms+8000)))
	must(s.AppendMessage(rawMessage(`{"role":"toolResult","toolCallId":"call_2","toolName":"edit","content":[{"type":"text","text":"edit failed: old text not found"}],"isError":true,"timestamp":` + fmt.Sprint(ms+9000) + `}`)))
	must(s.BranchWithSummary(engine.BranchSummary{FromID: cause, Summary: "Tried bufio.Scanner; the edit failed and the approach was dropped."}))
	must(s.AppendModelChange("openai", "gpt-4o"))
	must(s.AppendMessage(rawMessage(`{"role":"user","content":"Strip the CR then, and add a test.","timestamp":` + fmt.Sprint(ms+12000) + `}`)))
	fix := must(s.AppendMessage(assistantMsg("openai", "gpt-4o",
		`[{"type":"text","text":"Done: parse() trims a trailing \\r, and TestCRLF covers it."}]`,
		2000, 120, 500, 0.0125, "stop", ms+13000)))
	must(s.AppendCompaction(engine.Compaction{Summary: "The user reported CRLF input failing; the fix strips a trailing \\r in parse() and adds TestCRLF.", FirstKeptEntryID: fix, TokensBefore: 5230}))
	must(s.AppendCustomMessageEntry("ci-status", "CI: all checks passed", true, nil))
	must(s.AppendCustomEntry("editor-state", map[string]any{"open": []string{"layout/scan.go"}}))
	must(s.AppendMessage(rawMessage(`{"role":"bashExecution","command":"go test ./layout","output":"ok  \tgithub.com/sessctl/sessctl/layout\t0.012s\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":` + fmt.Sprint(ms+17000) + `}`)))
	must(s.AppendMessage(rawMessage(`{"role":"user","content":"Thanks. Use token=hunter2secret for the deploy.","timestamp":` + fmt.Sprint(ms+18000) + `}`)))
	must(s.AppendMessage(assistantMsg("openai", "gpt-4o",
		`[{"type":"text","text":"Deployed <main> & tagged v1.2.0 with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc123"}]`,
		300, 30, 0, 0.0011, "stop", ms+19000)))
	must(s.AppendSessionInfo("fix CRLF parsing"))
	_ = q1
	main := s.SessionFile()

	// A second, small session for list.
	s2, err := openStore(t, fixtureOptions(dir, "0b5e55ed-0000-4000-8000-000000000002", "f", start.Add(-24*time.Hour))).Create(ctx, fixtureCwd, engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	must(s2.AppendMessage(rawMessage(`{"role":"user","content":"What does the lock package do?","timestamp":` + fmt.Sprint(ms-86399000) + `}`)))
	must(s2.AppendMessage(assistantMsg("anthropic", "claude-haiku-4-5", `[{"type":"text","text":"It makes sure only one process writes a session."}]`, 100, 20, 0, 0.0002, "stop", ms-86398000)))
	return main
}

// runCLI runs sessctl in-process and returns stdout, stderr and the exit
// code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// checkGolden compares got with testdata/golden/name, or rewrites it with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test ./cmd/sessctl -run %s -update' to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, diff)
	}
}

// TestGolden checks the human (and JSON) output of the read commands on
// the fixture sessions. Run with -update to rewrite the goldens, then
// review the diff.
func TestGolden(t *testing.T) {
	// list prints local times; make them UTC for the golden. No other
	// test runs while this sequential test does.
	saved := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = saved })

	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	main := buildFixtures(t, dir)
	norm := func(s string) string { return tmpNorm(s, tmp) }

	cases := []struct {
		golden string
		args   []string
	}{
		{"list.txt", []string{"list", "--dir", dir}},
		{"show.txt", []string{"show", main}},
		{"show-full.txt", []string{"show", "--full", main}},
		{"show-leaf.txt", []string{"show", "--leaf", "e0000009", main}},
		{"show-leaf.txt", []string{"show", main, "--leaf", "e0000009"}}, // the form search prints
		{"show.jsonl", []string{"show", "--json", main}},
		{"tree.txt", []string{"tree", main}},
		{"tree.json", []string{"tree", "--json", main}},
		{"stats.txt", []string{"stats", main}},
		{"stats.json", []string{"stats", "--json", main}},
		{"stats-all.txt", []string{"stats", "--all", "--store", dir}},
		{"export.md", []string{"export", main}},
		{"export-redacted.md", []string{"export", "--redact", main}},
		{"export.html", []string{"export", "--format", "html", main}},
		{"export.json", []string{"export", "--format", "json", main}},
		{"export-redacted.json", []string{"export", "--format", "json", "--redact", main}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != exitOK {
				t.Fatalf("sessctl %v: exit %d, stderr:\n%s", tc.args, code, errOut)
			}
			if errOut != "" {
				t.Errorf("sessctl %v wrote to stderr:\n%s", tc.args, errOut)
			}
			checkGolden(t, tc.golden, norm(out))
			if strings.HasSuffix(tc.golden, ".json") {
				if !json.Valid([]byte(out)) {
					t.Errorf("%s is not valid JSON", tc.golden)
				}
			}
		})
	}
}
