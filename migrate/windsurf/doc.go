// Package windsurf imports Windsurf Cascade conversations kept as JSON
// into pi v3 session trees.
//
// Windsurf itself keeps Cascade conversations as encrypted protobuf; the
// JSON form read here is the one tools such as agent-sessions read: one
// <conversation id>.json per conversation in WINDSURF_SESSIONS_DIR, or in
// the editor's global storage (<config>/Windsurf/User/globalStorage/
// codeium.windsurf/cascade, with <config> ~/.config on Linux,
// ~/Library/Application Support on macOS and %APPDATA% on Windows). A
// file holds conversationId, title, workspace, cwd, gitBranch and
// messages [{role, content}], content being a string or a list of text
// parts. The format is unverified against the product, so the importer
// reads it loosely.
//
// Mapping: user and assistant messages become pi user and assistant
// messages (provider and api "windsurf": the models are reached through
// Windsurf's service; the model when a message names one, else
// migrate.UnknownModel); tool and system messages, which carry no call
// ids to pair with, become custom_message entries "windsurf-tool" and
// "windsurf-system" so their text stays in the context; the title is the
// session name; the cwd is cwd, else workspace, else ImportOptions.Cwd.
//
// Dates: the session starts at the first date the file holds: its
// createdAt, timestamp or startTime, else the earliest timestamp or
// createdAt of a message, else its updatedAt, lastUpdated or
// lastModified. A message's time is its own date, else the one before it.
// A file with no date at all takes its modification time, which is when
// the file was last written (or copied), not when the conversation
// happened: the session is marked Imported.DateFromFile, and its
// provenance entry says "dateFrom": "mtime".
package windsurf
