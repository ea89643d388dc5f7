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
	"github.com/sessctl/sessctl/message"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: agent AGENT_DIR")
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
	usage := message.NewUsage(1200, 80, 0, 0, message.Cost{Input: 0.0036, Output: 0.0012, Total: 0.0048})
	reply := func(stop message.StopReason, content ...message.Block) *message.Assistant {
		return message.NewAssistant("anthropic-messages", m.Provider, m.ModelID, content, usage, stop, time.Now())
	}
	if u, ok := msgs[len(msgs)-1].(*message.User); ok {
		call := message.NewToolCall(fmt.Sprint("call_", len(msgs)), "read", map[string]any{"path": "parser.go"})
		text := message.NewText("Let me read the parser (" + u.Content.String() + ").")
		if c.Thinking() != "off" {
			return reply(message.StopToolUse, message.NewThinking("The scanner is the likely culprit."), text, call), nil
		}
		return reply(message.StopToolUse, text, call), nil
	}
	return reply(message.StopStop, message.NewText("parse() now strips a trailing \\r; TestCRLF covers it.")), nil
}

// turn runs one user prompt to the end: the model's tool call, the tool's
// result, the model's answer.
func turn(s *engine.Session, prompt string) error {
	next := []message.Message{message.NewUser(prompt, time.Now())}
	for len(next) > 0 {
		for _, m := range next {
			if _, err := s.AppendMessage(m); err != nil {
				return err
			}
		}
		reply, err := model(s.Context())
		if err != nil {
			return err
		}
		if _, err := s.AppendMessage(reply); err != nil {
			return err
		}
		next = nil
		for _, b := range reply.Content {
			if call, ok := b.(*message.ToolCall); ok {
				next = append(next, message.NewToolResult(call.ID, call.Name, []message.Block{message.NewText("package parser\n\nfunc parse(b []byte) {}")}, false, time.Now()))
			}
		}
	}
	return nil
}

// run is the agent: it returns the session files it wrote, the main one
// first.
func run(ctx context.Context, dir string, log io.Writer) ([]string, error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{AgentDir: dir}) // pi's layout: one directory per cwd
	if err != nil {
		return nil, err
	}
	s, err := st.Create(ctx, cwd, engine.CreateOptions{WriteAtOnce: true}) // the prompt survives a crash
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var errs []error // of the appends whose ids are not needed
	check := func(_ string, err error) { errs = append(errs, err) }
	check(s.AppendModelChange("anthropic", "claude-sonnet-4-5"))
	check(s.AppendThinkingLevelChange("medium"))
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
	res := compaction.FinishSummary(prep, "The user asked why CRLF input fails; the scanner keeps the \\r.")
	check(s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details}))
	if err := turn(s, "Also handle a lone \\r."); err != nil {
		return nil, err
	}

	// Go back to the first answer, leaving a summary of what is abandoned.
	sum, _, err := s.SummarizeBranch(ctx, firstAnswer, compaction.Fixed("Fixed CRLF and lone CR in parse(); dropped for a different approach."), "")
	if err != nil {
		return nil, err
	}
	check(s.BranchWithSummary(engine.BranchSummary{FromID: firstAnswer, Summary: sum.Summary, Details: sum.Details}))
	check(s.AppendLabelChange(firstAnswer, "diagnosis"))
	check(s.AppendSessionInfo("CRLF parsing"))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	// A subagent gets a child session of its own.
	child, err := s.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		return nil, err
	}
	check(child.AppendModelChange("anthropic", "claude-haiku-4-5"))
	if err := errors.Join(turn(child, "List the tests that read CRLF files."), errors.Join(errs...)); err != nil {
		return nil, err
	}
	files := []string{s.SessionFile(), child.SessionFile()}
	if err := errors.Join(child.Close(), s.Close()); err != nil {
		return nil, err
	}

	// Resume: the most recent session is the child; skip it.
	r, err := st.ContinueRecent(ctx, cwd, engine.OpenOptions{SkipChildSessions: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.SessionFile() != files[0] {
		return nil, fmt.Errorf("resumed %s, want %s", r.SessionFile(), files[0])
	}

	// A viewer follows the session while the agent writes to it.
	viewer, err := st.Open(ctx, files[0], engine.OpenOptions{ReadOnly: true})
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
	return files, nil
}
