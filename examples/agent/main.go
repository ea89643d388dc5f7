package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/tree"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: agent DIR")
		os.Exit(2)
	}
	files, err := run(context.Background(), os.Args[1], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}

const cwd = "/home/dev/parser"

// model stands in for the model: it answers a context with an assistant
// message, calling the read tool once per new question.
func model(c compaction.Context) (*message.Assistant, error) {
	msgs, err := c.TypedMessages()
	if err != nil {
		return nil, err
	}
	m, ok := c.CurrentModel()
	if !ok {
		return nil, errors.New("no model chosen")
	}
	now := time.Now()
	usage := message.NewUsage(1200, 80, 0, 0, message.Cost{Input: 0.0036, Output: 0.0012, Total: 0.0048})
	last := msgs[len(msgs)-1]
	if u, ok := last.(*message.User); ok {
		call := message.NewToolCall("call_"+fmt.Sprint(len(msgs)), "read", map[string]any{"path": "parser.go"})
		content := []message.Block{message.NewText("Let me read the parser (" + u.Content.String() + ")."), call}
		if c.Thinking() != "off" {
			content = append([]message.Block{message.NewThinking("The scanner is the likely culprit.")}, content...)
		}
		return message.NewAssistant("anthropic-messages", m.Provider, m.ModelID, content, usage, message.StopToolUse, now), nil
	}
	return message.NewAssistant("anthropic-messages", m.Provider, m.ModelID,
		[]message.Block{message.NewText("parse() now strips a trailing \\r; TestCRLF covers it.")}, usage, message.StopStop, now), nil
}

// turn runs one user prompt to the end: the model's tool call, the tool's
// result, the model's answer.
func turn(s *engine.Session, prompt string) error {
	if _, err := s.AppendMessage(message.NewUser(prompt, time.Now())); err != nil {
		return err
	}
	for {
		reply, err := model(s.Context())
		if err != nil {
			return err
		}
		if _, err := s.AppendMessage(reply); err != nil {
			return err
		}
		if reply.StopReason != message.StopToolUse {
			return nil
		}
		for _, b := range reply.Content {
			if call, ok := b.(*message.ToolCall); ok {
				out := message.NewToolResult(call.ID, call.Name, []message.Block{message.NewText("package parser\n\nfunc parse(b []byte) {}")}, false, time.Now())
				if _, err := s.AppendMessage(out); err != nil {
					return err
				}
			}
		}
	}
}

// run is the agent: it returns the session files it wrote, the main one
// first.
func run(ctx context.Context, dir string, log io.Writer) ([]string, error) {
	opts := engine.Options{Dir: dir}
	s, err := engine.Create(ctx, cwd, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := s.AppendModelChange("anthropic", "claude-sonnet-4-5"); err != nil {
		return nil, err
	}
	if _, err := s.AppendThinkingLevelChange("medium"); err != nil {
		return nil, err
	}
	if err := turn(s, "Why does the parser reject CRLF input?"); err != nil {
		return nil, err
	}
	firstAnswer, _ := s.LeafID()
	if err := turn(s, "Fix it and add a test."); err != nil {
		return nil, err
	}

	// Compact with a summary the agent writes itself (no model call).
	prep, err := compaction.Prepare(s.BranchPath(""), compaction.Settings{ReserveTokens: 16384, KeepRecentTokens: 50})
	if err != nil {
		return nil, err
	}
	if _, err := s.AppendCompactionResult(compaction.FinishSummary(prep, "The user asked why CRLF input fails; the scanner keeps the \\r.")); err != nil {
		return nil, err
	}
	if err := turn(s, "Also handle a lone \\r."); err != nil {
		return nil, err
	}

	// Go back to the first answer, leaving a summary of what is abandoned.
	var branch compaction.BranchPreparation
	leaf, _ := s.LeafID()
	s.Index(func(ix *tree.Index) { // no Session method may be called in here
		abandoned := compaction.CollectEntriesForBranchSummary(ix, leaf, firstAnswer)
		branch = compaction.PrepareBranchEntries(abandoned.Entries, compaction.BranchBudget(0, 16384))
	})
	if _, err := s.BranchWithSummaryResult(firstAnswer, compaction.FinishBranch(&branch, "Fixed CRLF and lone CR in parse(); dropped for a different approach.")); err != nil {
		return nil, err
	}
	if _, err := s.SetLabel(firstAnswer, "diagnosis"); err != nil {
		return nil, err
	}
	if _, err := s.AppendSessionInfo("CRLF parsing"); err != nil {
		return nil, err
	}

	// A subagent gets a child session of its own.
	child, err := s.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := child.AppendModelChange("anthropic", "claude-haiku-4-5"); err != nil {
		return nil, err
	}
	if err := turn(child, "List the tests that read CRLF files."); err != nil {
		return nil, err
	}
	childFile := child.SessionFile()
	if err := child.Close(); err != nil {
		return nil, err
	}
	mainFile := s.SessionFile()
	if err := s.Close(); err != nil {
		return nil, err
	}

	// Resume: the most recent session is the child; skip it.
	r, err := engine.ContinueRecent(ctx, cwd, engine.Options{Dir: dir, SkipChildSessions: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.SessionFile() != mainFile {
		return nil, fmt.Errorf("resumed %s, want %s", r.SessionFile(), mainFile)
	}

	// A viewer follows the session while the agent writes to it.
	viewer, err := engine.Open(ctx, mainFile, engine.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer viewer.Close()
	if err := turn(r, "Run the tests again."); err != nil {
		return nil, err
	}
	news, err := viewer.Refresh()
	if err != nil {
		return nil, err
	}
	for _, e := range news {
		m, err := message.Decode(e.Message())
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(log, "viewer saw:", m.Role())
	}
	if name, _ := viewer.Name(); name != "CRLF parsing" {
		return nil, fmt.Errorf("viewer sees name %q", name)
	}
	return []string{mainFile, childFile}, nil
}
