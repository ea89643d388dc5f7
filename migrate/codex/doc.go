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
package codex
