// Package goose imports Goose sessions into pi v3 session trees.
//
// Goose (github.com/aaif-goose/goose, formerly block/goose) keeps its
// sessions in the SQLite database sessions.db in the sessions directory
// of its data directory: $GOOSE_PATH_ROOT/data when that is set (an
// absolute path), %APPDATA%\Block\goose\data on Windows, else
// $XDG_DATA_HOME/goose, default ~/.local/share/goose, on Linux and macOS
// alike (Goose's etcetera app strategy is XDG everywhere but Windows).
// Older Goose kept one JSONL file per session in the same directory,
// <id>.jsonl: a metadata line {working_dir, description, message_count,
// tokens...}, then one message per line. The database imports those files
// on its creation and leaves them; both are read, and a session in both
// is taken from the database (the file is reported as skipped).
//
// Built from Goose's schema version 17 (crates/goose/src/session/
// session_manager.rs at aaif-goose/goose 017176d, CURRENT_SCHEMA_VERSION
// 17): tables schema_version, sessions (id, name, description,
// session_type, working_dir, created_at, provider_name,
// model_config_json, the last call's and accumulated tokens,
// parent_session_id from v15, parent_delegation from v17), messages (id,
// message_id, session_id, role, content_json, created_timestamp in Unix
// seconds, metadata_json) and usage_ledger (v15: one row per provider
// call, is_compaction for the summarization call). Older versions are
// read by column name. A database whose schema_version is above 17 is
// refused with an error naming its version, never read as if it were
// known; one without Goose's tables is not taken for Goose's. Messages
// rows whose session is not in the sessions table are reported as
// damage, one report for each session they name; a working_dir that is
// not an absolute path is reported and not taken as the session's cwd.
//
// Mapping, message by message in (created_timestamp, id) order:
//
//   - text and image content of a user message: a pi user message;
//   - an assistant message (text, thinking with its signature,
//     redactedThinking, toolRequest and frontendToolRequest as toolCall,
//     "invalid_tool_call" for a request Goose could not parse): a pi
//     assistant message, provider and model from the session
//     (provider_name, model_config_json's model_name; "unknown" where
//     none), api from the provider;
//   - toolResponse content (in the next user message): one toolResult per
//     call, its content's text, images and resources, isError from the
//     result; a call that got no response gets an error result "(no
//     result recorded)";
//   - compaction: Goose keeps every message and marks the ones before a
//     compaction agentVisible false, then adds the summary as a user
//     message only the agent sees, and an assistant message continuing
//     from it. That summary becomes a pi compaction entry (tokensBefore
//     from the summarization call's usage_ledger row, in order), the
//     messages before it stay as history before it, and the rest follows;
//   - a message the agent does not see after the last compaction (a
//     systemNotification, shown to the user only) and content pi's
//     messages have no place for (tool confirmation requests, actions,
//     notifications): custom entries "goose-message" and "goose-content"
//     holding it, out of the context;
//   - usage: the usage_ledger rows of the provider calls, paired in order
//     with the assistant messages when there is one row for each (the
//     continuation after a compaction is no call); without a ledger
//     (before v15), the session's last-call tokens go to its last
//     assistant message;
//   - dates: the session's created_at (SQLite UTC text), each message's
//     created_timestamp; a legacy file's first message, else (no date at
//     all) its modification time;
//   - subagents: a session with parent_session_id (sub_agent sessions,
//     v15 and later) is a child of that session (parentSession); the
//     session name (name, else description) becomes the session name.
//
// A session with no message is reported as skipped. A message whose
// content_json or metadata_json is not JSON or not UTF-8 is damage
// (reported with the database and the row), as is a legacy line.
package goose
