// Package crush imports Crush sessions into pi v3 session trees.
//
// Crush (github.com/charmbracelet/crush) keeps the sessions of each
// project in the SQLite database crush.db in the project's data
// directory, .crush in the project (found by walking up from the working
// directory; options.data_directory moves it). Its global data directory
// ($CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else
// %LOCALAPPDATA%\crush on Windows and ~/.local/share/crush elsewhere)
// holds projects.json, which lists every project Crush ran in with its
// data directory; 'crush stats' reads the databases through it, and so
// does this importer when given that directory (its default location).
// It also reads a crush.db, a data directory or a project directory
// given directly. A session's working directory is its project's
// (projects.json's path, or the directory above .crush); Crush records
// none per session.
//
// Built from the schema of Crush v0.90.0 (internal/db/migrations up to
// 20260127000000, sqlc models, internal/message/content.go): tables
// sessions (id, parent_session_id, title, prompt_tokens,
// completion_tokens, cost, created_at, summary_message_id, todos) and
// messages (id, session_id, role, parts, model, provider, created_at,
// is_summary_message), times in Unix seconds. Applied migrations are in
// goose_db_version; a database migrated past 20260127000000 is refused
// with an error naming its version, the other databases are read.
//
// Mapping, message by message in (created_at, rowid) order; parts is a
// JSON array of {"type","data"}:
//
//   - user: text, image_url (a data URL as an image) and binary parts
//     (images as images, text files inline, other files named) become a
//     pi user message; a bang-mode shell_command part a custom_message
//     "crush-shell" (displayed) with the text Crush gives the model;
//   - assistant: reasoning (thinking and its signature), text and
//     tool_call (input, a JSON string, parsed as the arguments) become a
//     pi assistant message with the message's provider and model; the
//     finish part gives the stopReason (max_tokens: length, canceled:
//     aborted, error: error with its message and details);
//   - tool: each tool_result part a toolResult (content, media data as an
//     image, is_error, metadata as details) answering the call of the
//     assistant message before; a call without a result gets an error
//     result "(no result recorded)";
//   - summaries: a message with is_summary_message (/summarize or
//     automatic summarization) becomes a pi compaction entry with its
//     text; Crush builds its next prompts from the summary on, as pi does
//     from a compaction;
//   - usage: Crush records it per session only, the last call's prompt
//     and completion tokens and the cost of all calls; they go to the
//     session's last reply;
//   - subagents: a session with parent_session_id (the agent and
//     agentic_fetch tools' sessions, "<message id>$$<tool call id>") is a
//     child of that session (parentSession); the title is the session
//     name.
//
// A part of a type Crush v0.90 does not write is reported as damage (with
// the database, message and part) and kept, with the other parts pi has
// no place for, in a custom entry "crush-part" out of the context. A
// message whose parts are not JSON or not UTF-8 is damage. A session with
// no message is reported as skipped.
package crush
