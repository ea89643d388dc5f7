// Package cursor imports Cursor CLI (cursor-agent) chats into pi v3
// session trees.
//
// cursor-agent keeps each chat in ~/.cursor/chats/<md5 of the workspace
// path>/<agent id>/store.db, a SQLite database (WAL mode) with two tables:
// meta, whose row '0' is the hex of a JSON object (agentId,
// latestRootBlobId, name, mode, createdAt in epoch ms, lastUsedModel),
// and blobs, content-addressed by the SHA-256 of their data. Message blobs
// are JSON ({"role":"system"|"user"|"assistant"|"tool","content":...}); the
// blob named latestRootBlobId is protobuf whose field 1 lists the message
// blob ids in conversation order. Only the messages of the latest root are
// imported: other blobs are older roots, per-turn state, or superseded
// replies. The database is copied before it is read, since a WAL database
// cannot be opened read-only in place without touching its -shm file.
//
// Mapping: the system prompt is skipped; a user message's <user_info>
// block (OS, shell, workspace path) becomes a custom entry
// "cursor-user-info", out of the transcript, and its <user_query> is
// unwrapped into the pi user message (text outside the tags is kept);
// assistant reasoning parts become thinking (with their signature),
// text parts text, tool-call parts toolCall; tool messages become one
// toolResult per tool-result part. Model is lastUsedModel (else
// migrate.UnknownModel), provider and api "cursor", since Cursor serves
// the model through its own service; the chat's name is the session
// name; every entry has the
// chat's createdAt, the only time the store keeps. The working directory
// is the Workspace Path of <user_info>, else the system prompt's
// "Working directory", else ImportOptions.Cwd.
package cursor
