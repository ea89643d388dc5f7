package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

var demoCommand = newCommand("demo", "build a sample session in a temporary store and show it")

func init() { demoCommand.run = runDemo }

func runDemo(e *env, args []string) int {
	fs := e.flags(demoCommand)
	keep := fs.Bool("keep", false, "keep the temporary store and print its path")
	if code := e.parse(demoCommand, fs, args); code >= 0 {
		return code
	}
	root, err := os.MkdirTemp("", "sessctl-demo-")
	if err != nil {
		return e.fail(err)
	}
	if !*keep {
		defer os.RemoveAll(root)
	}
	agentDir := filepath.Join(root, "agent")
	cwd := "/home/demo/project"
	file, err := buildDemoSession(e, agentDir, cwd)
	if err != nil {
		return e.fail(err)
	}
	out := e.stdout
	step := func(title string) { fmt.Fprintf(out, "\n== %s\n", title) }

	step("1. the library wrote one JSONL file, exactly as pi writes it")
	fmt.Fprintf(out, "%s\n", human.QuotePath(file))
	data, err := os.ReadFile(file)
	if err != nil {
		return e.fail(err)
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(out, "  %s\n", human.OneLine(line, 110))
	}

	step("2. sessctl list --dir " + human.ShellQuote(filepath.Dir(file)))
	if code := run(e.ctx, []string{"list", "--dir", filepath.Dir(file)}, e.stdin, out, e.stderr); code != 0 {
		return code
	}

	step("3. sessctl dump FILE (excerpt: leaf, branch, labels, name)")
	var buf bytes.Buffer
	if code := run(e.ctx, []string{"dump", file}, e.stdin, &buf, e.stderr); code != 0 {
		return code
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &state); err != nil {
		return e.fail(err)
	}
	for _, k := range []string{"sessionId", "leafId", "sessionName", "branch", "labels"} {
		fmt.Fprintf(out, "  %-12s %s\n", k+":", state[k])
	}
	var entries []json.RawMessage
	_ = json.Unmarshal(state["entries"], &entries)
	fmt.Fprintf(out, "  %-12s %d (all branches)\n", "entries:", len(entries))

	step("4. sessctl context FILE (what the model is sent at the leaf)")
	buf.Reset()
	if code := run(e.ctx, []string{"context", file}, e.stdin, &buf, e.stderr); code != 0 {
		return code
	}
	var ctx struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Summary string          `json:"summary"`
		} `json:"messages"`
		ThinkingLevel string          `json:"thinkingLevel"`
		Model         json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(buf.Bytes(), &ctx); err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(out, "  model %s, thinking %s, %d messages:\n", ctx.Model, human.Quote(ctx.ThinkingLevel), len(ctx.Messages))
	for _, m := range ctx.Messages {
		text := m.Summary
		if text == "" {
			text = string(m.Content)
		}
		fmt.Fprintf(out, "    %-14s %s\n", m.Role, human.OneLine(text, 80))
	}
	if *keep {
		fmt.Fprintf(out, "\nThe store is kept at %s\n", human.QuotePath(root))
		fmt.Fprintf(out, "Browse it: sessctl serve --store %s\n", human.ShellQuote(layout.SessionsDir(agentDir)))
	}
	return exitOK
}

// buildDemoSession writes the sample session through the engine API and
// returns its file.
func buildDemoSession(e *env, agentDir, cwd string) (string, error) {
	st, err := engine.OpenStore(e.ctx, engine.StoreOptions{AgentDir: agentDir})
	if err != nil {
		return "", err
	}
	s, err := st.Create(e.ctx, cwd, engine.CreateOptions{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	at := func(ms int64) time.Time { return time.UnixMilli(1772355600000 + ms) }
	usage := func(in, out int64, cost message.Cost) message.Usage { return message.NewUsage(in, out, 0, 0, cost) }
	steps := []func() (string, error){
		func() (string, error) { return s.AppendModelChange("anthropic", "claude-sonnet-4-5") },
		func() (string, error) { return s.AppendThinkingLevelChange("medium") },
		func() (string, error) {
			return s.AppendMessage(message.NewUser("Why does the build fail on main?", at(0)))
		},
		func() (string, error) {
			return s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{
				message.NewThinking("Check the CI log first."),
				message.NewText("Let me look at the log."),
				message.NewToolCall("call_1", "bash", map[string]string{"command": "make test 2>&1 | tail -3"}),
			}, usage(120, 40, message.Cost{Input: 0.00036, Output: 0.0006, Total: 0.00096}), message.StopToolUse, at(1000)))
		},
		func() (string, error) {
			return s.AppendMessage(message.NewToolResult("call_1", "bash",
				[]message.Block{message.NewText("layout/codec.go:12: undefined: utf16")}, false, at(2000)))
		},
		func() (string, error) {
			return s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
				[]message.Block{message.NewText("codec.go uses utf16 without importing it.")},
				usage(200, 20, message.Cost{Input: 0.0006, Output: 0.0003, Total: 0.0009}), message.StopStop, at(3000)))
		},
	}
	var ids []string
	for _, f := range steps {
		id, err := f()
		if err != nil {
			return "", err
		}
		ids = append(ids, id)
	}
	if _, err := s.AppendLabelChange(ids[5], "found the cause"); err != nil {
		return "", err
	}
	// Go back to the first question and leave a summary of the abandoned
	// branch, so the move is durable.
	if _, err := s.BranchWithSummary(engine.BranchSummary{FromID: ids[2], Summary: "Found a missing import in layout/codec.go."}); err != nil {
		return "", err
	}
	if _, err := s.AppendMessage(message.NewUser("Fix it and add a test.", at(4000))); err != nil {
		return "", err
	}
	if _, err := s.AppendSessionInfo("  fix the main build  "); err != nil {
		return "", err
	}
	return s.SessionFile(), nil
}
