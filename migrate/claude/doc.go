// Package claude imports Claude Code sessions into pi v3 session trees.
//
// Claude Code keeps one JSONL file per session under
// ~/.claude/projects/<encoded cwd>/<session uuid>.jsonl (CLAUDE_CONFIG_DIR
// moves ~/.claude). Records are linked by uuid/parentUuid; the mapping is:
//
//   - user records: text and image blocks become a user message; each
//     tool_result block becomes a toolResult message (toolName from the
//     matching tool_use); isMeta records (caveats, reminders) become
//     custom_message entries "claude-meta" (display false) and slash
//     command wrappers (<command-name>, <local-command-stdout>, ...)
//     custom_message entries "claude-command", since Claude Code sends
//     both to the model;
//   - assistant records: lines sharing message.id are one API response
//     written one block per line, merged into one assistant message
//     (text, thinking with signature, redacted_thinking, tool_use as
//     toolCall); usage and stop_reason from its last line; api
//     "anthropic-messages", provider "anthropic"; isApiErrorMessage gives
//     stopReason "error";
//   - system compact_boundary plus its isCompactSummary user message: a
//     compaction entry (summary, tokensBefore from compactMetadata), linked
//     to the record before the boundary through logicalParentUuid;
//   - other system records (api_error, turn_duration, local_command, ...):
//     custom entries "claude-system" holding the record without its
//     envelope;
//   - summary records (a title whose leafUuid may point into another file
//     of the project) and custom-title records: session_info;
//   - progress, attachment, file-history-snapshot, permission-mode,
//     last-prompt, queue-operation: skipped; a record's parent is then its
//     nearest kept ancestor. A parentUuid that no record has (a slice of a
//     file, never-written progress records) adopts the previous kept
//     record, so the conversation stays one chain.
//
// parentUuid forks (rewinds, edits) stay forks in the pi tree; the branch
// holding the last message is written last, so it is pi's leaf. Tool
// results of parallel tool calls, which Claude Code parents on different
// lines of one response, are chained one after another below the merged
// response.
//
// Subagents become child sessions whose header names the parent's file
// (parentSession): flat agent-<id>.jsonl files beside the session (their
// sessionId is the parent's), hierarchical <session>/subagents/
// agent-<id>.jsonl files (their .meta.json names the session
// "<agentType>: <description>"), and the sidechain records
// Claude Code 2.0 wrote into the session file itself. A subagent whose
// parent file is gone is imported on its own and records the parent's id
// in its provenance entry. history.jsonl maps project directories back to
// their exact working directory when no record names it.
//
// With ImportOptions.History, the sessions history.jsonl lists whose
// transcripts are gone (none of the store's project directories holds
// <sessionId>.jsonl; when one project directory is imported, only its
// sessions count) are imported too, as prompt-only sessions
// (Imported.PromptOnly, "promptOnly": true in the provenance entry):
// one user message per prompt, in history order, with each "[Pasted text
// #N ...]" replaced by the pasted text history.jsonl holds (a paste it
// does not hold stays a placeholder) and pasted images as image blocks;
// slash commands as custom_message entries "claude-command". The cwd is
// the prompts' project, the start the first prompt's time, the source id
// the session id, so a transcript found later replaces the prompt-only
// file on the next import. Prompts older Claude Code wrote without a
// sessionId are reported as skipped.
package claude
