// Package opencode imports opencode sessions into pi v3 session trees.
//
// opencode keeps its data in $XDG_DATA_HOME/opencode (default
// ~/.local/share/opencode). Up to 1.1 it wrote JSON files:
// storage/session/<project>/<ses_id>.json (id, parentID, directory,
// title, time, revert), storage/message/<ses_id>/<msg_id>.json and
// storage/part/<msg_id>/<prt_id>.json. From 1.2 it keeps the same records
// in the SQLite database opencode.db (opencode-<channel>.db for other
// channels; OPENCODE_DB names another file): tables session, message
// (id, session_id, data) and part (id, message_id, data). The migration
// leaves the JSON files in place, so both are read and a session present
// in both is taken from the database. Ids sort by time; messages and
// parts are read in id order. Databases are copied before they are read
// (they are in WAL mode).
//
// Mapping: a user message's text parts (ignored ones left out) and image
// file parts become a pi user message; a user message that only asks for
// a compaction is skipped. An assistant message is split at its
// step-start parts, since one opencode message spans the model calls of a
// tool loop: each step becomes an assistant message (reasoning as
// thinking, text, tool parts as toolCall with state.input; usage and cost
// from its step-finish; provider and model from the message, api from
// the provider) followed by one toolResult per tool part (output, or the
// error with isError; a tool that never finished gets an error result).
// An assistant summary message (summary true) becomes a compaction
// entry. The title is the session name, parentID makes a subagent
// session a child (parentSession), and a pending revert keeps the
// reverted messages as a branch while the leaf stays before them.
package opencode
