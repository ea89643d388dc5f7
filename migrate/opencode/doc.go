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
// (they are in WAL mode). Sessions made through the v2 session API (1.18)
// keep their messages in the table session_message instead, one row per
// message in seq order (see v2.go); a session with both kinds has them
// merged by time.
//
// Mapping: a user message's text parts (ignored ones left out) and image
// file parts become a pi user message, other files "[file: <name>]"; a
// user message that only asks for a compaction is skipped. Synthetic
// parts, which opencode adds to a user message and the model sees (the
// notice before a /shell command, "Called the Read tool with ..." and the
// file itself for an attachment), become custom_message entries
// "opencode-synthetic" (display false) in their place among the parts,
// so they stay in the context without being something the user typed.
// An assistant message is split at its
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
//
// v2 messages map the same way where they match (user text and files;
// assistant content with reasoning, text and tool blocks, whose state's
// content parts are the tool result; finish "error" and error give
// stopReason "error"); a synthetic message becomes a custom_message
// "opencode-synthetic" and a system message one "opencode-system" (both
// display false), a shell message a custom_message "opencode-shell"
// (display true) with the text opencode shows the model ("Shell command:
// <command>\n<output>") and details {callID, command, output},
// model-switched a model_change, agent-switched a custom entry
// "opencode-agent", compaction a compaction entry (summary, then the
// recent record; tokensBefore from the last assistant's usage; details
// {reason}). A type this importer does not know is kept as a custom
// entry "opencode-message" holding it.
//
// opencode 2 (2.0.x; schema as captured from 2.0.3 to 2.0.25 stores and
// schema.gen.ts) keeps its sessions in the table session_v2 (the columns
// of session plus fork_session_id and fork_boundary) and their messages
// in session_message, whose foreign key now names session_v2; it leaves
// the 1.x tables in place and copies their sessions into session_v2
// under the same id, and a 1.x opencode run after the upgrade adds
// sessions to the old tables only. Both are read: session_v2 first, then
// the session table for the ids session_v2 lacks, so a migrated session is
// imported once, from its v2 copy, and from its session_message rows
// only. A database with neither table is reported with the names of the
// tables it has. The 2.0 shapes of session_message data are read beside
// 1.18's: shell {command, status, exit, output {output, truncated}}
// (details {command, output, exit}), compaction {status, reason, summary}
// (a failed one is kept as an "opencode-message" entry, not a
// compaction), tool state error {type, message}, a pending tool's input
// as a JSON string; idle, location-switched and other types are kept as
// "opencode-message" entries. A session_v2 row with parent_id is a
// subagent of that session; one with fork_session_id a fork, imported as
// a child of its source (parentSession): opencode copies the source's
// messages into it, and the leading rows whose type and data are the
// source's, in seq order, are left out, the fork starting with a custom
// entry ForkType saying how many; when the source session is not in the
// store, they are imported as the fork's own history.
//
// A session that gives no entry at all is reported in
// Conversion.Skipped, never dropped silently.
package opencode
