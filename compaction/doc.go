// Package compaction turns a session path into the model context and makes
// compaction decisions, following pi 1.6.0 (docs/compatibility.md says
// where it differs from 0.73.1 and 0.58.3).
//
// Build is pi's buildSessionContext, the messages of its session
// projection: the latest compaction's systemMessage checkpoint and
// summary first, then the kept range from its firstKeptEntryId (system
// messages skipped), then everything after it, each entry's newest
// context edit applied (the message omitted, or its content replaced);
// branch summaries and custom messages become messages of their own; the
// model and thinking level are those last set on the path. Stored message
// objects are returned as the bytes that were read, never re-encoded.
//
// # Compaction
//
// Everything pi does to compact a session that needs no model is here and
// gives pi's answers on the same entries: token estimates (EstimateTokens,
// CalculateContextTokens, EstimateContextTokens, ShouldCompact), the cut
// point (FindValidCutPoints, FindCutPoint, FindTurnStartIndex), and
// Prepare, which is prepareCompaction: the first kept entry, the messages
// to summarise, the prefix of a split turn, tokensBefore, the previous
// summary, the files touched, the session's thinking level, and the
// summary requests (Request, with the reasoning level pi asks for) exactly
// as pi would assemble them (SerializeConversation over ConvertToLLM, the
// conversation and previous-summary blocks, the reply budget). Finish puts
// the summaries together as pi's compact() does: the split-turn separator,
// "No prior history.", the file lists appended, and details
// {readFiles, modifiedFiles}. Compact runs the requests through a
// Summarizer and calls Finish.
//
// A typical caller (the package example):
//
//	func compact(ctx context.Context, session *engine.Session, summarizer compaction.Summarizer) error {
//		prep, err := compaction.Prepare(session.BranchPath(""), compaction.DefaultSettings())
//		if err != nil {
//			return err // ErrAlreadyCompacted, ErrNothingToCompact
//		}
//		res, err := compaction.Compact(ctx, prep, summarizer, "")
//		if err != nil {
//			return err // nothing is written
//		}
//		_, err = session.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
//			TokensBefore: res.TokensBefore, Details: res.Details})
//		return err
//	}
//
// # Branch summaries
//
// CollectEntriesForBranchSummary, PrepareBranchEntries and FinishBranch
// are pi's branch summarisation for /tree navigation: the abandoned
// entries, the messages that fit the budget (tool results skipped), the
// request, the preamble and file lists, and "No content to summarize" when
// nothing is left to summarise.
//
// # Summarizers
//
// The summary texts are the one part that needs a model. A Summarizer
// supplies them: Fixed (the same text for every request), Func (any
// function), Command (an external program, such as a local model's CLI,
// given the request on standard input) and Offline (a deterministic
// summary made from the messages alone, so compaction works without a
// model).
//
// # Prompts
//
// The instruction texts (SystemPrompt, HistoryPrompt, UpdatePrompt,
// TurnPrefixPrompt, BranchPrompt) are sessctl's own wording. They follow
// the structure of pi's prompts, heading for heading, but are not pi's
// text. Everything else in a request, and every literal written into a
// summary, is byte for byte what pi uses.
//
// # Differences from pi
//
//   - Malformed messages (a text block without text, content that is not
//     an array) count 0 tokens and serialise as empty where pi would throw
//     or count NaN.
//   - Where pi cuts a long tool result inside a surrogate pair (sending a
//     lone surrogate), sessctl cuts one UTF-16 unit earlier.
//   - File lists carried over from earlier details keep only strings.
//
// Entries are the JSON codec's (internal/jsonl); a library user names them
// engine.Entry and a leaf's kind engine.KindString or engine.KindNull,
// aliases of the same types.
package compaction
