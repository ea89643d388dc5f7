package compaction

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
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
	// ErrNoMessages is returned for a session of fewer than two messages,
	// which pi's /compact refuses as "Nothing to compact (no messages
	// yet)" before it prepares anything (engine.Session.PrepareCompaction).
	ErrNoMessages = errors.New("nothing to compact (no messages yet)")
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

// Prepare is pi 1.x's prepareCompaction(path, settings) over a
// root-to-leaf path (getBranch(): every entry type included). It fails
// with ErrAlreadyCompacted when the last entry is a compaction, and with
// ErrNothingToCompact when the path is empty, the first kept entry has
// no string id, or there is nothing to summarise.
//
// It works on the path's projection (the context Build gives, entry by
// entry: the newest compaction first, then what it kept and what came
// after, context edits applied): the window starts after the newest
// compaction (at the first entry it kept), the cut is FindCutPoint's
// over the projected entries (where a trailing omitted recovery attempt
// moves it past itself), the messages to summarise are the projected
// messages of the window, without system messages and compactions (the
// compaction's systemMessage carries those), and TokensBefore is the
// estimate of the projected context, from the last valid usage unless a
// context edit or compaction came after it on the path. The indexes in
// the Preparation are indexes in path.
func Prepare(path []*tree.Entry, s Settings) (*Preparation, error) {
	if n := len(path); n > 0 && path[n-1].Type == jsonl.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	if len(path) == 0 {
		return nil, ErrNothingToCompact
	}
	ps := project(contextEntries(path))
	pos := make(map[*jsonl.Entry]int, len(path))
	for i, e := range path {
		pos[e] = i
	}
	at := func(i int) int {
		if i < 0 {
			return -1
		}
		if i >= len(ps) {
			return len(path)
		}
		return pos[ps[i].e]
	}
	prev := -1
	for i, p := range ps {
		if p.e.Type == jsonl.TypeCompaction && len(p.msgs) > 0 {
			prev = i
			break
		}
	}
	start := prev + 1
	cp := cutPoint(ps, start, len(ps), s.KeepRecentTokens, true)
	if cp.FirstKeptIndex >= len(ps) {
		return nil, ErrNothingToCompact
	}
	first := ps[cp.FirstKeptIndex].e
	if first.IDKind != jsonl.KindString || first.ID == "" {
		return nil, fmt.Errorf("%w: the first kept entry (line %d) has no id; migrate the session", ErrNothingToCompact, first.Line)
	}
	historyEnd := cp.FirstKeptIndex
	if cp.IsSplitTurn {
		historyEnd = cp.TurnStartIndex
	}
	p := &Preparation{
		FirstKeptEntryID:        first.ID,
		FirstKeptIndex:          at(cp.FirstKeptIndex),
		PreviousCompactionIndex: at(prev),
		StartIndex:              at(start),
		TurnStartIndex:          at(cp.TurnStartIndex),
		IsSplitTurn:             cp.IsSplitTurn,
		Settings:                s,
	}
	p.MessagesToSummarize = summarised(ps[start:historyEnd])
	if cp.IsSplitTurn {
		p.TurnPrefixMessages = summarised(ps[cp.TurnStartIndex:cp.FirstKeptIndex])
	}
	if len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0 {
		return nil, ErrNothingToCompact
	}
	ctx := FromPath(path)
	p.TokensBefore = projectedTokens(ps, path)
	p.ThinkingLevel, _ = jsonl.String(ctx.ThinkingLevel)
	if prev >= 0 {
		c := ps[prev].e
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

// summarised is pi 1.x's getMessagesFromProjectedEntryForCompaction over
// projected entries: their messages, without compactions' and without
// system messages.
func summarised(ps []projected) []Message {
	var out []Message
	for _, p := range ps {
		if p.e.Type == jsonl.TypeCompaction {
			continue
		}
		for _, m := range p.msgs {
			if roleOf(m.Raw) != "system" {
				out = append(out, m)
			}
		}
	}
	return out
}

// projectedTokens is pi 1.x's estimateProjectedContextTokens: the
// context estimate (EstimateContextTokens) when the message whose usage
// it uses comes from an entry after the last context edit or compaction
// of the path; otherwise, since that usage counted what the edit or
// compaction removed, the estimate of the current system message
// (CurrentSystemMessage) plus every message but the system ones.
func projectedTokens(ps []projected, path []*jsonl.Entry) float64 {
	msgs := projectionMessages(ps)
	est := EstimateContextTokens(msgs)
	if est.LastUsageIndex >= 0 {
		n := 0
		var src *jsonl.Entry
		for _, p := range ps {
			if est.LastUsageIndex < n+len(p.msgs) {
				src = p.e
				break
			}
			n += len(p.msgs)
		}
		usageAt := -1
		if src != nil && truthyID(src) {
			for i, e := range path {
				if sameID(e, src) {
					usageAt = i
					break
				}
			}
		}
		invalid := -1
		for i := len(path) - 1; i >= 0; i-- {
			if t := path[i].Type; t == jsonl.TypeContextEdit || t == jsonl.TypeCompaction {
				invalid = i
				break
			}
		}
		if usageAt > invalid {
			return est.Tokens
		}
	}
	tokens := 0
	if sys := CurrentSystemMessage(msgs); sys != nil {
		tokens = EstimateTokens(sys)
	}
	for _, m := range msgs {
		if roleOf(m.Raw) != "system" {
			tokens += EstimateTokens(m.Raw)
		}
	}
	return float64(tokens)
}

// Requests returns the summary requests compact() would make, with the
// caller's custom instructions added to both ("" for none) and the
// reasoning level of ThinkingLevel: for a split turn with a non-empty
// prefix, a history request (nil when MessagesToSummarize is empty) and a
// turn-prefix request; otherwise one history request.
func (p *Preparation) Requests(customInstructions string) (history, turnPrefix *Request) {
	reasoning := p.reasoning()
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		if len(p.MessagesToSummarize) > 0 {
			history = historyRequest(p.MessagesToSummarize, p.Settings, customInstructions, p.PreviousSummary, reasoning)
		}
		return history, turnPrefixRequest(p.TurnPrefixMessages, p.Settings, customInstructions, reasoning)
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
// the history text (when nothing was summarised before the turn, whatever
// historyText says: the previous summary, or NoPriorHistory without one),
// SplitTurnSeparator and prefixText;
// otherwise it is historyText. The file lists are then appended
// (FileLists.Suffix) and stored as details.
func Finish(p *Preparation, historyText, prefixText string) Result {
	summary := historyText
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		if len(p.MessagesToSummarize) == 0 {
			historyText = NoPriorHistory
			if p.PreviousSummary != "" {
				historyText = p.PreviousSummary
			}
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

// Compact runs the summary requests of p through s, the history request
// first and then the turn prefix's, one after the other as pi 1.x does,
// and assembles the result with Finish. An error of either request fails
// the compaction; nothing is to be written then.
func Compact(ctx context.Context, p *Preparation, s Summarizer, customInstructions string) (Result, error) {
	history, prefix := p.Requests(customInstructions)
	var htext, ptext string
	var err error
	if history != nil {
		if htext, err = s.Summarize(ctx, *history); err != nil {
			return Result{}, fmt.Errorf("summarize history: %w", err)
		}
	}
	if prefix != nil {
		if ptext, err = s.Summarize(ctx, *prefix); err != nil {
			return Result{}, fmt.Errorf("summarize turn prefix: %w", err)
		}
	}
	return Finish(p, htext, ptext), nil
}

// truthyID reports whether an entry's id is truthy in JavaScript.
func truthyID(e *jsonl.Entry) bool {
	switch e.IDKind {
	case jsonl.KindAbsent, jsonl.KindNull:
		return false
	case jsonl.KindString:
		return e.ID != ""
	}
	v, _ := e.IDJSON()
	return truthy(v)
}
