package engine_test

// This file, from its imports to the end of run, is the code of the
// README's "Embedding" section: TestDocExamples checks that the two stay
// the same, so the README's code compiles. run is not called (it would
// write to the real pi store).

import (
	"context"
	"encoding/json"

	"github.com/sessctl/sessctl/engine"
)

func run(ctx context.Context, cwd string) error {
	// A new session in pi's store (~/.pi/agent/sessions/--<cwd>--/),
	// holding its writer lock until Close. Every append is fsynced.
	s, err := engine.Create(ctx, cwd, engine.Options{})
	if err != nil {
		return err
	}
	defer s.Close()

	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendThinkingLevelChange("medium")
	s.AppendMessage(json.RawMessage(`{"role":"user","content":"Why does the build fail?","timestamp":1772355600000}`))
	// ... call the model with s.Context().Messages, then store the reply:
	// s.AppendMessage(reply)   (the file appears with the first assistant message, as in pi)

	// Go back to an earlier entry, leaving a summary of the abandoned
	// branch: the move survives a reload.
	// s.BranchWithSummary(&entryID, "Tried X; it did not help.", nil, nil)
	return nil
}
