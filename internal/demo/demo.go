// Package demo writes the sample session 'sessctl demo' shows, through
// the engine API alone, as an agent would: a model and thinking level, a
// question, a tool call and its result, an answer, a label, a branch back
// to the question with a summary of the abandoned branch, a new prompt and
// a name. Its times are fixed; its ids are the store's.
package demo

import (
	"context"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// Cwd is the working directory the sample session records.
const Cwd = "/home/demo/project"

// Name is the sample session's display name, as it reads back.
const Name = "fix the main build"

// WriteSession writes the sample session into the pi store whose agent
// directory is agentDir and returns its file.
func WriteSession(ctx context.Context, agentDir string) (string, error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{AgentDir: agentDir})
	if err != nil {
		return "", err
	}
	s, err := st.Create(ctx, Cwd, engine.CreateOptions{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	at := func(ms int64) time.Time { return time.UnixMilli(1772355600000 + ms) }
	usage := func(in, out int64, cost message.Cost) message.Usage { return message.NewUsage(in, out, 0, 0, cost) }
	const model = "claude-sonnet-4-5"
	steps := []func() (string, error){
		func() (string, error) { return s.AppendModelChange("anthropic", model) },
		func() (string, error) { return s.AppendThinkingLevelChange("medium") },
		func() (string, error) {
			return s.AppendMessage(message.NewUser("Why does the build fail on main?", at(0)))
		},
		func() (string, error) {
			return s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", model, []message.Block{
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
			return s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", model,
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
	if _, err := s.AppendSessionInfo("  " + Name + "  "); err != nil { // pi trims the name
		return "", err
	}
	return s.SessionFile(), nil
}
