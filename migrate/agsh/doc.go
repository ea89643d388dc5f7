// Package agsh imports agsh sessions into pi v3 session trees.
//
// agsh 0.1 to 0.11 keep every session in one SQLite database,
// $XDG_DATA_HOME/agsh/sessions.db (default ~/.local/share/agsh), with the
// tables sessions(id, created_at, updated_at, locked_by, metadata) and
// messages(id, session_id, role, content, created_at), messages ordered
// by id (0.12 dropped locked_by; later releases, renamed meka, changed
// the schema further). A user message's content is its text; an
// assistant message's a JSON array of content blocks (text, thinking with
// a signature or null, tool_use); a tool_results message's a JSON array
// of tool_result blocks, whose content is a string up to 0.7 and an array
// of parts ({"type":"text","text"}, {"type":"image","source"}) from 0.8.
// Times are RFC 3339 with nanoseconds. The database is opened read-only
// (mode=ro; copied first when a journal or WAL file lies beside it), and
// a stale locked_by is ignored: importing only reads.
//
// From 0.4, agsh writes a context block before every prompt: up to 0.9
// "[Environment context]\nWorking directory: <dir>\nDate: <date>\n" (with
// a "[Current task list]" before it from 0.8) and a blank line; from
// 0.10 the same wrapped in "<context>\n...</context>\n\n". The block is
// taken out of the user message and kept, whole, in a custom entry
// "agsh-context" before it (out of the context, like Cursor's
// <user_info>: a preamble the agent regenerates every turn). The working
// directory of the latest block is the session's cwd, unless metadata
// names one; else ImportOptions.Cwd.
//
// A compacted session (agsh replaces its messages with one user message
// "[Conversation summary from session compaction]\n\n<summary>", from
// 0.8.1 followed by "\n\n[Post-compaction context]\n\n<environment,
// tasks, scratchpad>", and the messages it kept) starts with a compaction
// entry holding the summary, with the post-compaction context in its
// details ({"postCompactionContext"}); the kept messages follow it. agsh
// saves a kept message of tool results as an empty user message, losing
// the results: the calls it answered get error results saying so, and the
// empty message is left out.
//
// Mapping: user messages become pi user messages; assistant messages
// assistant messages (text; thinking, with its signature only when it can
// be one the API gave, base64 of 64 characters or more, never null, ""
// or a placeholder; tool_use as toolCall), with api
// "anthropic-messages" and the provider and model metadata names (agsh 0.1
// to 0.11 never write it), else migrate.UnknownProvider and
// migrate.UnknownModel; each tool_result block a toolResult (isError from
// is_error, toolName from the matching tool_use, each content part a text
// or image block). A row whose content cannot be read is reported as
// "message <id>" and skipped; a session without messages is reported as
// skipped.
package agsh
