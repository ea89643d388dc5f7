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
// messages (provider and api "windsurf", the model when a message names
// one); tool and system messages, which carry no call ids to pair with,
// become custom_message entries "windsurf-tool" and "windsurf-system"
// so their text stays in the context; the title is the session name; the
// cwd is cwd, else workspace, else ImportOptions.Cwd. Timestamps come from
// the file's createdAt/timestamp fields where present, else from the
// file's modification time.
package windsurf
