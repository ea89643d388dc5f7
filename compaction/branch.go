package compaction

import (
	"context"
	"fmt"
	"slices"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// BranchCollection is the result of CollectEntriesForBranchSummary.
type BranchCollection struct {
	// Entries are the abandoned entries, oldest first.
	Entries []*tree.Entry
	// CommonAncestorID is the deepest entry on both the old leaf's and the
	// target's root paths; HasCommonAncestor is false when there is none
	// (different roots, or no old leaf).
	CommonAncestorID  string
	HasCommonAncestor bool
}

// CollectEntriesForBranchSummary is pi's collectEntriesForBranchSummary:
// the entries left behind when the leaf moves from oldLeafID to targetID.
// It walks parent links from the old leaf up to (not including) the common
// ancestor and returns them oldest first; compaction and branch_summary
// entries on the way are included. A target below the old leaf collects
// nothing; a target above it collects the entries below the target (the
// target itself excluded). An empty oldLeafID collects nothing. Unlike
// pi, the walk ends on a parent cycle.
func CollectEntriesForBranchSummary(ix *tree.Index, oldLeafID, targetID string) BranchCollection {
	var c BranchCollection
	if oldLeafID == "" {
		return c
	}
	onOld := make(map[string]bool)
	for _, e := range ix.Branch(oldLeafID) {
		onOld[tree.Key(e)] = true
	}
	target := ix.Branch(targetID)
	for i := len(target) - 1; i >= 0; i-- {
		if k := tree.Key(target[i]); onOld[k] {
			c.CommonAncestorID, c.HasCommonAncestor = k, true
			break
		}
	}
	seen := make(map[*jsonl.Entry]bool)
	cur, ok := oldLeafID, true
	for ok && cur != "" && !(c.HasCommonAncestor && cur == c.CommonAncestorID) {
		e, found := ix.Get(cur)
		if !found || seen[e] {
			break
		}
		seen[e] = true
		c.Entries = append(c.Entries, e)
		cur, ok = tree.ParentKey(e)
	}
	slices.Reverse(c.Entries)
	return c
}

// BranchPreparation is the result of PrepareBranchEntries.
type BranchPreparation struct {
	// Messages are the messages to summarise, oldest first.
	Messages []Message
	// FileOps are the files touched on the branch.
	FileOps FileOps
	// TotalTokens is the estimate of Messages.
	TotalTokens int
}

// BranchBudget is the token budget of a branch summary's input:
// contextWindow (128000 when 0) minus reserveTokens (pi's
// branchSummary.reserveTokens, 16384 by default).
func BranchBudget(contextWindow, reserveTokens int) int {
	if contextWindow == 0 {
		contextWindow = 128000
	}
	return contextWindow - reserveTokens
}

// PrepareBranchEntries is pi's prepareBranchEntries: it first carries over
// the file lists of every branch_summary entry not made by an extension
// (compaction details are not carried over), then walks the entries
// newest to oldest converting them to messages (tool results are skipped
// entirely), recording their file operations, and prepending them while
// they fit the budget. The first message that does not fit ends the walk;
// a compaction or branch summary is still taken then if the total is
// below 90% of the budget. A budget of 0 or less means no limit.
func PrepareBranchEntries(entries []*tree.Entry, budget int) BranchPreparation {
	var p BranchPreparation
	for _, e := range entries {
		if e.Type != jsonl.TypeBranchSummary {
			continue
		}
		f := fields(e.Raw, "fromHook", "details")
		if !truthy(f[0]) && truthy(f[1]) {
			p.FileOps.addDetails(f[1])
		}
	}
	var rev []Message
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		m, ok := branchEntryMessage(e)
		if !ok {
			continue
		}
		p.FileOps.AddMessage(m.Raw)
		tokens := EstimateTokens(m.Raw)
		if budget > 0 && p.TotalTokens+tokens > budget {
			if (e.Type == jsonl.TypeCompaction || e.Type == jsonl.TypeBranchSummary) &&
				float64(p.TotalTokens) < float64(budget)*0.9 {
				rev = append(rev, m)
				p.TotalTokens += tokens
			}
			break
		}
		rev = append(rev, m)
		p.TotalTokens += tokens
	}
	slices.Reverse(rev)
	p.Messages = rev
	return p
}

// Request returns the branch summary request (generateBranchSummary's),
// or nil when there is no message to summarise. instructions are added as
// "Additional focus", or replace the built-in instructions when replace is
// set and they are not empty.
func (p *BranchPreparation) Request(instructions string, replace bool) *Request {
	if len(p.Messages) == 0 {
		return nil
	}
	return branchRequest(p.Messages, instructions, replace)
}

// BranchResult is a finished branch summary: the summary and details of
// the branch_summary entry pi appends (with fromHook false).
type BranchResult struct {
	Summary string
	Details FileLists
}

// FinishBranch assembles a branch summary as pi does: NoContentToSummarize
// with empty file lists when there are no messages; otherwise
// BranchSummaryPreamble, the summariser's text and the file lists
// (FileLists.Suffix).
func FinishBranch(p *BranchPreparation, text string) BranchResult {
	if len(p.Messages) == 0 {
		return BranchResult{Summary: NoContentToSummarize, Details: FileLists{ReadFiles: []string{}, ModifiedFiles: []string{}}}
	}
	lists := p.FileOps.Lists()
	return BranchResult{Summary: BranchSummaryPreamble + text + lists.Suffix(), Details: lists}
}

// SummarizeBranch runs the branch request of p through s and assembles the
// result with FinishBranch. Without messages no request is made.
func SummarizeBranch(ctx context.Context, p *BranchPreparation, s Summarizer, instructions string, replace bool) (BranchResult, error) {
	req := p.Request(instructions, replace)
	if req == nil {
		return FinishBranch(p, ""), nil
	}
	text, err := s.Summarize(ctx, *req)
	if err != nil {
		return BranchResult{}, fmt.Errorf("summarize branch: %w", err)
	}
	return FinishBranch(p, text), nil
}
