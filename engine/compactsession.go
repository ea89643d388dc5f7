package engine

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// Compact compacts the active branch the way pi's agent does, in one
// call: it prepares the compaction (compaction.Prepare with settings,
// which fails with compaction.ErrNothingToCompact or
// compaction.ErrAlreadyCompacted exactly where pi prepares nothing), runs
// the summary requests through sum (compaction.Compact), and appends the
// compaction entry (fromHook false, as pi's agent writes its own). It
// returns the entry's id. Nothing is written when a step fails.
func (s *Session) Compact(ctx context.Context, sum compaction.Summarizer, settings compaction.Settings) (string, error) {
	prep, err := compaction.Prepare(s.BranchPath(""), settings)
	if err != nil {
		return "", fmt.Errorf("compact %s: %w", s.SessionFile(), err)
	}
	res, err := compaction.Compact(ctx, prep, sum, "")
	if err != nil {
		return "", fmt.Errorf("compact %s: %w", s.SessionFile(), err)
	}
	return s.AppendCompactionResult(res)
}

// AppendCompactionResult appends the compaction entry of res (from
// compaction.Compact or compaction.FinishSummary) as pi's agent appends
// its own: fromHook false. It returns the entry's id.
func (s *Session) AppendCompactionResult(res compaction.Result) (string, error) {
	fromHook := false
	return s.AppendCompaction(Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details, FromHook: &fromHook})
}

// PrepareCompaction prepares the compaction of the active branch with
// settings as pi's /compact does before it asks for a summary: a session
// of fewer than two messages (on any branch) is compaction.ErrNoMessages,
// and a branch that cannot be cut compaction.ErrAlreadyCompacted or
// compaction.ErrNothingToCompact, each returned as it is. It writes
// nothing; compaction.Compact or FinishSummary and AppendCompaction
// finish the job.
func (s *Session) PrepareCompaction(settings compaction.Settings) (*compaction.Preparation, error) {
	messages := 0
	for _, en := range s.Entries() {
		if en.Type == jsonl.TypeMessage {
			messages++
		}
	}
	if messages < 2 {
		return nil, compaction.ErrNoMessages
	}
	return compaction.Prepare(s.BranchPath(""), settings)
}
