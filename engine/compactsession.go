package engine

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/compaction"
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
	fromHook := false
	return s.AppendCompaction(Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details, FromHook: &fromHook})
}
