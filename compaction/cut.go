package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
)

// FindValidCutPoints returns the indexes in path[start:end] where pi may
// cut (findValidCutPoints): message entries with role user, assistant,
// bashExecution, custom, branchSummary or compactionSummary, and
// branch_summary and custom_message entries. A tool result is never a cut
// point, so a kept tool result always stays with its call.
func FindValidCutPoints(path []*jsonl.Entry, start, end int) []int {
	var out []int
	for i := start; i < end; i++ {
		e := path[i]
		switch e.Type {
		case jsonl.TypeMessage:
			switch messageRole(e) {
			case "user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary":
				out = append(out, i)
			}
		case jsonl.TypeBranchSummary, jsonl.TypeCustomMessage:
			out = append(out, i)
		}
	}
	return out
}

// FindTurnStartIndex returns the index of the entry that starts the turn
// holding path[i] (findTurnStartIndex): scanning from i down to start, the
// first branch_summary or custom_message entry, or message with role user
// or bashExecution. It returns -1 when there is none.
func FindTurnStartIndex(path []*jsonl.Entry, i, start int) int {
	for ; i >= start; i-- {
		e := path[i]
		switch e.Type {
		case jsonl.TypeBranchSummary, jsonl.TypeCustomMessage:
			return i
		case jsonl.TypeMessage:
			if r := messageRole(e); r == "user" || r == "bashExecution" {
				return i
			}
		}
	}
	return -1
}

// CutPoint is the result of FindCutPoint.
type CutPoint struct {
	// FirstKeptIndex is the index in the path of the first entry kept
	// verbatim.
	FirstKeptIndex int
	// TurnStartIndex is the start of the turn that the cut splits, or -1.
	TurnStartIndex int
	// IsSplitTurn is true when the cut is not on a user message and a turn
	// start exists at or before it.
	IsSplitTurn bool
}

// FindCutPoint is pi's findCutPoint over path[start:end]:
//
//  1. without valid cut points the cut is start, not split;
//  2. otherwise the fallback is the first valid cut point (keep
//     everything); walking back from end-1, the estimates of message
//     entries (only those: custom_message and branch_summary entries add
//     nothing) are summed, and once the sum reaches keepRecentTokens the
//     cut is the first valid cut point at or after that entry, or the
//     fallback when there is none (a trailing run of tool results);
//  3. the cut then moves back over directly preceding entries that are
//     neither messages nor compactions (model, thinking, label, custom,
//     session_info, custom_message, branch_summary entries), so they stay
//     with the kept part;
//  4. a cut on a user message is not split; otherwise the turn start is
//     searched from the cut back to start.
func FindCutPoint(path []*jsonl.Entry, start, end, keepRecentTokens int) CutPoint {
	cuts := FindValidCutPoints(path, start, end)
	if len(cuts) == 0 {
		return CutPoint{FirstKeptIndex: start, TurnStartIndex: -1}
	}
	cut := cuts[0]
	total := 0
	for i := end - 1; i >= start; i-- {
		e := path[i]
		if e.Type != jsonl.TypeMessage {
			continue
		}
		msg, _ := e.Field("message")
		total += EstimateTokens(msg)
		if total >= keepRecentTokens {
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	for cut > start {
		prev := path[cut-1]
		if prev.Type == jsonl.TypeCompaction || prev.Type == jsonl.TypeMessage {
			break
		}
		cut--
	}
	if messageRole(path[cut]) == "user" {
		return CutPoint{FirstKeptIndex: cut, TurnStartIndex: -1}
	}
	ts := FindTurnStartIndex(path, cut, start)
	return CutPoint{FirstKeptIndex: cut, TurnStartIndex: ts, IsSplitTurn: ts != -1}
}
