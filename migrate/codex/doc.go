// Package codex imports Codex CLI rollouts into pi v3 session trees.
//
// Codex writes one JSONL rollout per session under
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl (and
// archived_sessions/; CODEX_HOME moves ~/.codex). Current rollouts wrap
// every line as {"timestamp","type","payload"}; rollouts of 2025 wrote a
// bare {id, timestamp, instructions, git} line first and bare response
// items after it, with {"record_type":"state"} lines between. Both are
// read. The mapping:
//
//   - session_meta: the session id, start, cwd, CLI version and model
//     provider (or, for the old form, the first line and the cwd of the
//     <environment_context> message);
//   - turn_context: model_change and thinking_level_change (from effort)
//     entries when the model or effort changes;
//   - user messages: pi user messages, except the ones Codex writes itself
//     (<environment_context>, <user_instructions>, "# AGENTS.md
//     instructions", <turn_aborted>, <user_shell_command>, <skill>,
//     <subagent_notification>, ...) and developer/system messages, which
//     are skipped;
//   - a run of assistant items (reasoning, assistant message, function and
//     custom tool calls, local shell and web search calls) up to the next
//     tool output or user message: one assistant message (reasoning
//     summary or text as thinking, with the reasoning item as its
//     signature as pi's openai-responses provider keeps it; output_text as
//     text; calls as toolCall with parsed arguments); api
//     "openai-responses", provider from the session (default "openai");
//     the next token_count's last_token_usage is its usage; a turn_aborted
//     event makes its stopReason "aborted";
//   - function_call_output and custom_tool_call_output: toolResult
//     messages, isError when the output reports a non-zero exit code or
//     success false; web searches, which have no output item, get a
//     toolResult saying so;
//   - compacted: a compaction entry;
//   - event_msg user_message and agent_message duplicate the response
//     items and are used only in rollouts that have no message items.
//
// Rollouts are linear, so every entry's parent is the one before it.
//
// Compressed rollouts: Codex (from 0.137, its local_thread_store_compression
// feature) compresses a rollout idle for a week to
// rollout-<time>-<uuid>.jsonl.zst beside where it was, one zstd frame of
// the same lines, and decompresses it again before appending. Such a file
// is read through a zstd decoder (several frames are read one after
// another) and imports to the same session file, byte for byte, as its
// plain form: the provenance names the plain .jsonl. While Codex
// compresses or decompresses, both files exist; the plain one is read
// unless the compressed one was modified later (Codex prefers the plain
// one), and the other is reported as skipped. Names not ending in .jsonl
// or .jsonl.zst (Codex's *.tmp files) are not read. Damage in a
// compressed file is reported with its path and the line of the
// decompressed text; a file cut short keeps the lines before the cut.
//
// Identity: the first session_meta line is the rollout's own (its id,
// start, cwd, and parent: parent_thread_id of a subagent, forked_from_id
// of a fork); later ones are copies.
//
// Forks (codex fork, /fork): the child names its parent in
// forked_from_id and is imported as its child (parentSession). A legacy
// rollout replays the parent's rollout after its own session_meta, line
// by line, restamped with the time of the fork; those lines are matched
// against the parent's rollout in the same store (type and payload,
// timestamps, null members and the ids a copy may gain on messages
// aside; events the parent has and the copy lacks are passed over) up to
// the first line that differs or the child's own session_meta, and left
// out: the parent's import has them. The child starts with a custom
// entry ForkType saying so, then the model and thinking level the replay
// ended on. If the parent's rollout is not in the store (deleted, or the
// fork imported alone), the replay is imported as the child's own
// history, being the only copy left, and the entry says "imported". A
// paginated rollout (history_mode "paginated", what Codex 0.171.0 writes
// by default) names the parent's history in history_base and copies none
// of it; nothing is left out. An unknown history_mode is reported as
// damage.
//
// Built from the rollout format of Codex 0.98 (the corpus) to 0.171.0:
// TestRealCodex runs the real CLI, when installed, against a stub model.
package codex
