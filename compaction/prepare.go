package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// The reasons Prepare gives for not compacting. pi's manual /compact
// reports them as "Already compacted" and "Nothing to compact (session too
// small)"; automatic compaction ends silently.
var (
	// ErrAlreadyCompacted is returned when the last path entry is a
	// compaction: two compactions in a row are impossible.
	ErrAlreadyCompacted = errors.New("already compacted")
	// ErrNothingToCompact is returned when the path is empty or the first
	// kept entry has no id (unmigrated data).
	ErrNothingToCompact = errors.New("nothing to compact (session too small)")
)

// Preparation is everything pi's prepareCompaction computes, plus the
// ready-made summary requests. Nothing in it needs a model.
type Preparation struct {
	// FirstKeptEntryID is the id of the first entry kept verbatim; it can
	// be a non-message entry (the pull-back of FindCutPoint).
	FirstKeptEntryID string
	// FirstKeptIndex is that entry's index in the path.
	FirstKeptIndex int
	// PreviousCompactionIndex is the index of the last compaction on the
	// path, or -1.
	PreviousCompactionIndex int
	// StartIndex is where the window of this compaction starts: the
	// previous compaction's first kept entry (the entry after that
	// compaction when its firstKeptEntryId is not on the path), or 0.
	StartIndex int
	// TurnStartIndex is the start of the split turn, or -1.
	TurnStartIndex int
	// IsSplitTurn is true when the cut falls inside a turn.
	IsSplitTurn bool
	// MessagesToSummarize are the messages of the window before the turn
	// start (split) or the cut, tool results included; a compaction in
	// the window gives none.
	MessagesToSummarize []Message
	// TurnPrefixMessages are the messages from the turn start to the cut
	// (split turns only).
	TurnPrefixMessages []Message
	// TokensBefore is estimateContextTokens over the messages of the
	// path's context (FromPath: the previous compaction's summary, the
	// entries it kept, and everything after it). It is NaN when a usage
	// object lacks a component.
	TokensBefore float64
	// ThinkingLevel is the session's thinking level at the end of the
	// path ("off" without a thinking_level_change, "" when the last one
	// has no level). The summary requests ask a reasoning model
	// (Settings.Reasoning) to reason at it, unless it is "off" or "".
	// A caller whose agent runs at another level sets it before
	// Requests or Compact.
	ThinkingLevel string
	// PreviousSummary is the previous compaction's summary, "" without one.
	PreviousSummary string
	// FileOps are the files touched: carried over from the previous
	// compaction's details (unless an extension made it), plus those of
	// MessagesToSummarize and TurnPrefixMessages.
	FileOps FileOps
	// Settings are the settings the preparation was made with.
	Settings Settings

	// History is the history request (fresh or update) without custom
	// instructions, or nil when none is made: a split turn with nothing
	// before it, whose history text is NoPriorHistory.
	History *Request
	// TurnPrefix is the turn-prefix request, or nil when the turn is not
	// split or its prefix is empty.
	TurnPrefix *Request
}

// Prepare is pi 0.73.1's prepareCompaction(path, settings) over a
// root-to-leaf path (getBranch(): every entry type included). It fails
// with ErrAlreadyCompacted when the last entry is a compaction, and with
// ErrNothingToCompact when the path is empty or the first kept entry has
// no string id.
//
// The window runs from the previous compaction's first kept entry (the
// entry after that compaction when its firstKeptEntryId is not on the
// path; the start of the path without a compaction) to the end, so the
// entries the previous compaction kept are summarised or kept again (pi
// 0.58.3 started after the compaction and lost them: pi issue #2608).
// Compaction entries in the window are not messages to summarise.
// TokensBefore is estimated over the path's context.
func Prepare(path []*jsonl.Entry, s Settings) (*Preparation, error) {
	if n := len(path); n > 0 && path[n-1].Type == jsonl.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	prev := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == jsonl.TypeCompaction {
			prev = i
			break
		}
	}
	start, end := 0, len(path)
	if prev >= 0 {
		// pathEntries.findIndex((e) => e.id === firstKeptEntryId)
		start = prev + 1
		firstKept, has := path[prev].Field("firstKeptEntryId")
		isFirstKept := idMatcher(firstKept, has)
		for i, e := range path {
			if isFirstKept(e) {
				start = i
				break
			}
		}
	}
	cp := FindCutPoint(path, start, end, s.KeepRecentTokens)
	if cp.FirstKeptIndex >= len(path) {
		return nil, ErrNothingToCompact
	}
	first := path[cp.FirstKeptIndex]
	if first.IDKind != jsonl.KindString || first.ID == "" {
		return nil, fmt.Errorf("%w: the first kept entry (line %d) has no id; migrate the session", ErrNothingToCompact, first.Line)
	}
	p := &Preparation{
		FirstKeptEntryID:        first.ID,
		FirstKeptIndex:          cp.FirstKeptIndex,
		PreviousCompactionIndex: prev,
		StartIndex:              start,
		TurnStartIndex:          cp.TurnStartIndex,
		IsSplitTurn:             cp.IsSplitTurn,
		Settings:                s,
	}
	ctx := FromPath(path)
	p.TokensBefore = EstimateContextTokens(ctx.Messages).Tokens
	p.ThinkingLevel, _ = jsonl.String(ctx.ThinkingLevel)
	historyEnd := cp.FirstKeptIndex
	if cp.IsSplitTurn {
		historyEnd = cp.TurnStartIndex
	}
	p.MessagesToSummarize = windowMessages(path, start, historyEnd)
	if cp.IsSplitTurn {
		p.TurnPrefixMessages = windowMessages(path, cp.TurnStartIndex, cp.FirstKeptIndex)
	}
	if prev >= 0 {
		c := path[prev]
		f := fields(c.Raw, "summary", "fromHook", "details")
		p.PreviousSummary, _ = jsonl.String(f[0])
		if !truthy(f[1]) && truthy(f[2]) {
			p.FileOps.addDetails(f[2])
		}
	}
	for _, m := range p.MessagesToSummarize {
		p.FileOps.AddMessage(m.Raw)
	}
	for _, m := range p.TurnPrefixMessages {
		p.FileOps.AddMessage(m.Raw)
	}
	p.History, p.TurnPrefix = p.Requests("")
	return p, nil
}

// Requests returns the summary requests compact() would make, with the
// caller's custom instructions added to the history request ("" for none)
// and the reasoning level of ThinkingLevel:
// for a split turn with a non-empty prefix, a history request (nil when
// MessagesToSummarize is empty) and a turn-prefix request, which pi sends
// concurrently; otherwise one history request, which pi sends even when
// MessagesToSummarize is empty (an empty conversation block).
func (p *Preparation) Requests(customInstructions string) (history, turnPrefix *Request) {
	reasoning := p.reasoning()
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		if len(p.MessagesToSummarize) > 0 {
			history = historyRequest(p.MessagesToSummarize, p.Settings, customInstructions, p.PreviousSummary, reasoning)
		}
		return history, turnPrefixRequest(p.TurnPrefixMessages, p.Settings, reasoning)
	}
	return historyRequest(p.MessagesToSummarize, p.Settings, customInstructions, p.PreviousSummary, reasoning), nil
}

// reasoning is the reasoning level the summary requests ask for: the
// thinking level, for a reasoning model, unless it is off.
func (p *Preparation) reasoning() string {
	if !p.Settings.Reasoning || p.ThinkingLevel == "off" {
		return ""
	}
	return p.ThinkingLevel
}

// Result is a finished compaction: the members of the compaction entry
// pi appends (with fromHook false).
type Result struct {
	Summary          string
	FirstKeptEntryID string
	// TokensBefore is NaN when pi would write null.
	TokensBefore float64
	// Details are written as {"readFiles":[...],"modifiedFiles":[...]}.
	Details FileLists
}

// Finish assembles the compaction from the summariser's texts as pi's
// compact() does. For a split turn with a non-empty prefix the summary is
// the history text (NoPriorHistory when nothing was summarised before the
// turn, whatever historyText says), SplitTurnSeparator and prefixText;
// otherwise it is historyText. The file lists are then appended
// (FileLists.Suffix) and stored as details.
func Finish(p *Preparation, historyText, prefixText string) Result {
	summary := historyText
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		if len(p.MessagesToSummarize) == 0 {
			historyText = NoPriorHistory
		}
		summary = historyText + SplitTurnSeparator + prefixText
	}
	return FinishSummary(p, summary)
}

// FinishSummary uses summary as the whole summary body in place of the
// model's texts (no split-turn assembly) and appends the file lists as pi
// does, so the entry carries the same details as one pi made. It is for
// callers that bring their own summary text.
func FinishSummary(p *Preparation, summary string) Result {
	lists := p.FileOps.Lists()
	return Result{
		Summary:          summary + lists.Suffix(),
		FirstKeptEntryID: p.FirstKeptEntryID,
		TokensBefore:     p.TokensBefore,
		Details:          lists,
	}
}

// Compact runs the summary requests of p through s, the two requests of a
// split turn concurrently as pi does, and assembles the result with Finish.
// An error of either request fails the compaction; nothing is to be
// written then.
func Compact(ctx context.Context, p *Preparation, s Summarizer, customInstructions string) (Result, error) {
	history, prefix := p.Requests(customInstructions)
	var (
		htext, ptext string
		herr, perr   error
		wg           sync.WaitGroup
	)
	if prefix != nil {
		wg.Go(func() { ptext, perr = s.Summarize(ctx, *prefix) })
	}
	if history != nil {
		htext, herr = s.Summarize(ctx, *history)
	}
	wg.Wait()
	if herr != nil {
		return Result{}, fmt.Errorf("summarize history: %w", herr)
	}
	if perr != nil {
		return Result{}, fmt.Errorf("summarize turn prefix: %w", perr)
	}
	return Finish(p, htext, ptext), nil
}
