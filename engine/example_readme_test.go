package engine_test

// This file holds the code of the README's quick start (from its imports
// to the end of run) and of docs/embedding.md's fuller session (runFull):
// TestDocExamples checks that each stays the same as its document, so
// the documents' code compiles. Neither is called (they would write to
// the real pi store).

import (
	"context"
	"errors"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

func run(ctx context.Context, cwd, prompt string, model func(compaction.Context) (*message.Assistant, error), summarize compaction.Func) error {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{}) // pi's store: ~/.pi/agent/sessions/<cwd>/
	if err != nil {
		return err
	}
	s, err := st.ContinueRecent(ctx, cwd, engine.OpenOptions{}) // cwd's latest session, or a new one
	if err != nil {
		return err
	}
	defer s.Close() // the writer lock is held until then
	if _, err := s.AppendMessage(message.NewUser(prompt, time.Now())); err != nil {
		return err
	}
	reply, err := model(s.Context()) // c.TypedMessages(), c.CurrentModel(), c.Thinking()
	if err != nil {
		return err
	}
	if _, err := s.AppendMessage(reply); err != nil { // synced before it returns
		return err
	}
	_, err = s.Compact(ctx, summarize, compaction.DefaultSettings()) // as pi does, when pi would
	if errors.Is(err, compaction.ErrNothingToCompact) || errors.Is(err, compaction.ErrAlreadyCompacted) {
		err = nil
	}
	return err
}

func runFull(ctx context.Context, cwd string, callModel func(compaction.Context) (*message.Assistant, error)) error {
	// pi's store (~/.pi/agent/sessions/, one directory per cwd);
	// StoreOptions{AgentDir: dir} keeps that layout below any directory,
	// and the other fields set the filesystem, clock, ids and sync
	// policy of every session.
	st, err := engine.OpenStore(ctx, engine.StoreOptions{})
	if err != nil {
		return err
	}
	// A new session in cwd's directory, holding its writer lock until
	// Close. pi writes a session's file at its first user or assistant
	// message; WriteAtOnce writes it, synced, at the first append, so the
	// setup entries survive a crash too. Every append after that is synced before it
	// returns (StoreOptions.Sync).
	s, err := st.Create(ctx, cwd, engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		return err
	}
	defer s.Close()

	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendThinkingLevelChange("medium")
	question, _ := s.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))

	// What to send: c.TypedMessages(), c.CurrentModel(), c.Thinking().
	reply, err := callModel(s.Context())
	if err != nil {
		return err
	}
	if _, err := s.AppendMessage(reply); err != nil {
		return err
	}

	// Compact with a summary of your own (or compaction.Compact with a
	// Summarizer): details {readFiles, modifiedFiles} as pi writes them.
	if prep, err := compaction.Prepare(s.BranchPath(""), compaction.DefaultSettings()); err == nil {
		res := compaction.FinishSummary(prep, "The build fails because ...")
		s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
			TokensBefore: res.TokensBefore, Details: res.Details})
	}

	// Go back to an earlier entry, leaving a summary of the abandoned
	// branch: the move survives a reload.
	s.BranchWithSummary(engine.BranchSummary{FromID: question, Summary: "Tried X; it did not help."})

	// A subagent's session names this one as its parent.
	child, err := s.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		return err
	}
	return child.Close()
}

// run is compiled, not called.
var _ = run
var _ = runFull
