// Package agsh imports agsh sessions into pi v3 session trees.
//
// agsh 0.1 keeps every session in one SQLite database,
// $XDG_DATA_HOME/agsh/sessions.db (default ~/.local/share/agsh), with the
// tables sessions(id, created_at, updated_at, locked_by, metadata) and
// messages(id, session_id, role, content, created_at), messages ordered
// by id. A user message's content is its plain text; an assistant
// message's is a JSON array of content blocks (text, tool_use); a
// tool_results message's is a JSON array of tool_result blocks. Times are
// RFC 3339 with nanoseconds. The database is opened read-only (mode=ro;
// copied first when a journal or WAL file lies beside it), and a stale
// locked_by is ignored: importing only reads.
//
// Mapping: user messages become pi user messages; assistant messages
// assistant messages (text, thinking, tool_use as toolCall; api
// "anthropic-messages", provider "agsh", since the store does not name
// the model); each tool_result block a toolResult (isError from
// is_error, toolName from the matching tool_use). agsh records no working
// directory: the cwd is metadata's "cwd" when present, else
// ImportOptions.Cwd. A row whose content cannot be read is reported as
// "message <id>" and skipped.
package agsh
