package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/tree"
)

// ErrNoMessages is returned by PrepareCompaction for a session with fewer
// than two messages: pi refuses to compact one too.
var ErrNoMessages = errors.New("nothing to compact (no messages yet)")

// PrepareCompaction prepares the compaction of the active branch with
// settings, as pi's /compact does before it asks for a summary. It fails
// with ErrNoMessages for a session of fewer than two messages, and with
// compaction.ErrAlreadyCompacted or compaction.ErrNothingToCompact when
// the branch cannot be cut. It returns the preparation and the first entry
// it keeps. Finish with compaction.Compact or compaction.FinishSummary and
// AppendCompactionResult.
func (s *Session) PrepareCompaction(settings compaction.Settings) (*compaction.Preparation, *Entry, error) {
	messages := 0
	for _, en := range s.Entries() {
		if en.Type == jsonl.TypeMessage {
			messages++
		}
	}
	if messages < 2 {
		return nil, nil, ErrNoMessages
	}
	branch := s.BranchPath("")
	prep, err := compaction.Prepare(branch, settings)
	if err != nil {
		return nil, nil, err
	}
	return prep, branch[prep.FirstKeptIndex], nil
}

// SummarizeBranch summarises the part of the tree that moving the leaf
// from the current leaf to target abandons, as pi's tree navigation does
// (a budget for a 16384-token reserve), with sum and extra instructions.
// ok is false when there is nothing to summarise (no leaf, or nothing
// abandoned); the result is then empty.
func (s *Session) SummarizeBranch(ctx context.Context, target string, sum compaction.Summarizer, instructions string) (res compaction.BranchResult, ok bool, err error) {
	var col compaction.BranchCollection
	if oldLeaf, ok := s.LeafID(); ok {
		s.Index(func(ix *tree.Index) { col = compaction.CollectEntriesForBranchSummary(ix, oldLeaf, target) })
	}
	if len(col.Entries) == 0 {
		return compaction.BranchResult{}, false, nil
	}
	prep := compaction.PrepareBranchEntries(col.Entries, compaction.BranchBudget(0, 16384))
	res, err = compaction.SummarizeBranch(ctx, &prep, sum, instructions, false)
	return res, err == nil, err
}

// CompactionSettings returns compaction.DefaultSettings with
// compaction.reserveTokens and compaction.keepRecentTokens read from the
// agent's settings.json and, for pi, the project's <cwd>/.pi/settings.json
// (the project wins), as pi's settings manager does. A file that cannot
// be read or parsed is skipped and returned among the warnings; a missing
// one is not.
func CompactionSettings(agent layout.Agent, cwd string) (compaction.Settings, []error) {
	settings := compaction.DefaultSettings()
	var warnings []error
	var files []string
	if dir, err := layout.AgentDir(agent); err == nil {
		files = append(files, filepath.Join(dir, "settings.json"))
	}
	if agent == layout.AgentPi && cwd != "" {
		files = append(files, filepath.Join(cwd, ".pi", "settings.json"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				warnings = append(warnings, err)
			}
			continue
		}
		var v struct {
			Compaction struct {
				ReserveTokens    *float64 `json:"reserveTokens"`
				KeepRecentTokens *float64 `json:"keepRecentTokens"`
			} `json:"compaction"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			warnings = append(warnings, fmt.Errorf("ignoring %s: %w", f, err))
			continue
		}
		if p := v.Compaction.ReserveTokens; p != nil {
			settings.ReserveTokens = int(*p)
		}
		if p := v.Compaction.KeepRecentTokens; p != nil {
			settings.KeepRecentTokens = int(*p)
		}
	}
	return settings, warnings
}
