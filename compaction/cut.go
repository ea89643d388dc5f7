package compaction

import (
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// isCutPointRole reports whether a message of this role may start the
// kept part: user, assistant, bashExecution, custom, branchSummary and
// compactionSummary messages; never a tool result, so a kept tool result
// always stays with its call.
func isCutPointRole(role string) bool {
	switch role {
	case "user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary":
		return true
	}
	return false
}

// isTurnStartRole reports whether a message of this role starts a turn:
// the cut-point roles but assistant.
func isTurnStartRole(role string) bool {
	return role != "assistant" && isCutPointRole(role)
}

func anyRole(msgs []Message, is func(string) bool) bool {
	for _, m := range msgs {
		if is(roleOf(m.Raw)) {
			return true
		}
	}
	return false
}

// rawView is a path as pi 1.x's findCutPoint sees it: every entry with
// the messages it would give on its own (entryMessages), no edits.
func rawView(path []*jsonl.Entry, start, end int) []projected {
	ps := make([]projected, len(path))
	for i := start; i < end && i < len(path); i++ {
		ps[i] = projected{e: path[i], msgs: entryMessages(path[i])}
	}
	return ps
}

// FindValidCutPoints returns the indexes in path[start:end] where pi may
// cut (pi 1.x's findValidCutPoints): the entries other than compactions
// whose context messages (a message entry's message, a custom_message,
// a branch_summary with a summary) include one with a cut-point role
// (user, assistant, bashExecution, custom, branchSummary or
// compactionSummary). A tool result is never a cut point, so a kept tool
// result always stays with its call.
func FindValidCutPoints(path []*tree.Entry, start, end int) []int {
	return validCuts(rawView(path, start, end), start, end)
}

func validCuts(ps []projected, start, end int) []int {
	var out []int
	for i := start; i < end; i++ {
		if ps[i].e.Type != jsonl.TypeCompaction && anyRole(ps[i].msgs, isCutPointRole) {
			out = append(out, i)
		}
	}
	return out
}

// FindTurnStartIndex returns the index of the entry that starts the turn
// holding path[i] (findTurnStartIndex): scanning from i down to start, the
// first entry other than a compaction with a message of role user,
// bashExecution, custom, branchSummary or compactionSummary. It returns
// -1 when there is none.
func FindTurnStartIndex(path []*tree.Entry, i, start int) int {
	return turnStart(rawView(path, start, i+1), i, start)
}

func isTurnStart(p projected) bool {
	return p.e.Type != jsonl.TypeCompaction && anyRole(p.msgs, isTurnStartRole)
}

func turnStart(ps []projected, i, start int) int {
	for ; i >= start; i-- {
		if isTurnStart(ps[i]) {
			return i
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
	// IsSplitTurn is true when the cut is not on a turn start and a turn
	// start exists at or before it.
	IsSplitTurn bool
}

// FindCutPoint is pi 1.x's findCutPoint over path[start:end]:
//
//  1. without valid cut points the cut is start, not split;
//  2. otherwise the fallback is the first valid cut point (keep
//     everything); walking back from end-1, the estimates of the entries'
//     context messages are summed, and once the sum reaches
//     keepRecentTokens the cut is the first valid cut point at or after
//     that entry, or the last valid cut point when there is none (a
//     trailing run of tool results keeps the call before it);
//  3. the cut then moves back over directly preceding entries that are
//     neither compactions nor give context messages (model, thinking,
//     label, custom, session_info entries, ...), so they stay with the
//     kept part;
//  4. a cut on a turn start is not split; otherwise the turn start is
//     searched from the cut back to start.
//
// Prepare cuts the same way over the path's projection (context edits
// applied), where an omitted recovery attempt at the end also moves the
// cut past it.
func FindCutPoint(path []*tree.Entry, start, end, keepRecentTokens int) CutPoint {
	return cutPoint(rawView(path, start, end), start, end, keepRecentTokens, false)
}

// cutPoint is findCutPoint (projection false) or pi 1.x's
// findProjectedCutPoint (projection true) over ps[start:end].
func cutPoint(ps []projected, start, end, keep int, projection bool) CutPoint {
	cuts := validCuts(ps, start, end)
	if len(cuts) == 0 {
		return CutPoint{FirstKeptIndex: start, TurnStartIndex: -1}
	}
	cut := cuts[0]
	total := 0
	exceeded := false
	for i := end - 1; i >= start; i-- {
		tokens := 0
		for _, m := range ps[i].msgs {
			tokens += EstimateTokens(m.Raw)
		}
		if tokens == 0 {
			continue
		}
		total += tokens
		if total >= keep {
			exceeded = true
			cut = cuts[len(cuts)-1]
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	if projection && exceeded && recoveryOmissionSuffix(ps[cut+1:end]) {
		cut++
	}
	for cut > start {
		prev := ps[cut-1]
		if prev.e.Type == jsonl.TypeCompaction || len(prev.msgs) > 0 {
			break
		}
		cut--
	}
	if isTurnStart(ps[cut]) {
		return CutPoint{FirstKeptIndex: cut, TurnStartIndex: -1}
	}
	ts := turnStart(ps, cut, start)
	return CutPoint{FirstKeptIndex: cut, TurnStartIndex: ts, IsSplitTurn: ts != -1}
}

// recoveryOmissionSuffix reports whether the projected entries after a
// cut are a closed recovery attempt: an omitted assistant message, and
// nothing else that the model sees (every entry that would give messages
// omitted, no compaction), with no context edit replacing an entry
// outside them. pi then keeps from the entry after the cut.
func recoveryOmissionSuffix(suffix []projected) bool {
	visible := func(p projected) bool {
		return p.e.Type != jsonl.TypeContextEdit && len(entryMessages(p.e)) > 0
	}
	omitted := map[string]bool{}
	for _, p := range suffix {
		if visible(p) && len(p.msgs) == 0 {
			omitted[entryKey(p.e)] = true
		}
	}
	assistant := false
	for _, p := range suffix {
		if p.e.Type == jsonl.TypeContextEdit {
			rep, ok := p.e.Field("replacement")
			t, tok := p.e.Field("targetId")
			if !(ok && jsonl.KindOf(rep) == jsonl.KindNull) && !omitted[valueKey(t, tok)] {
				return false
			}
		}
		if p.e.Type == jsonl.TypeCompaction || (visible(p) && len(p.msgs) > 0) {
			return false
		}
		if p.e.Type == jsonl.TypeMessage && p.e.HasMessage() && p.e.Role == "assistant" && visible(p) && len(p.msgs) == 0 {
			assistant = true
		}
	}
	return assistant
}
