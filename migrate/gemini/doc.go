// Package gemini imports Gemini CLI chats into pi v3 session trees.
//
// Gemini CLI records chats under ~/.gemini/tmp/<project>/chats/
// (GEMINI_CLI_HOME moves the home directory), where <project> is the
// SHA-256 of the project root (older builds) or a short name registered in
// ~/.gemini/projects.json and tmp/<project>/.project_root (newer builds).
// A chat is either one JSON document (session-<time>-<id>.json,
// rewritten on every update) or, in newer builds, JSONL
// (session-<time>-<id>.jsonl): a metadata line, one line per message
// record, {"$set":{...}} metadata updates and {"$rewindTo":id} rewinds.
// A message id written again replaces the earlier record in place (the
// later record wins, the position stays); a "$set" of messages (the
// model's context after a compression) is not the transcript and is
// ignored. Subagent chats are chats/<parent session id>/<id>.jsonl and
// become child sessions.
//
// The chats do not record the working directory. It is taken from
// .project_root, then projects.json, then a directory whose SHA-256 is
// the chat's projectHash among the absolute paths its tool calls name,
// then ImportOptions.Cwd.
//
// Mapping: user messages become pi user messages (text parts, inlineData
// as images; functionResponse parts answer tool calls); gemini messages
// become assistant messages (thoughts as thinking "**subject**\n\n
// description", thought parts as thinking, text, toolCalls as toolCall;
// tokens as usage with input excluding cached; api
// "google-generative-ai", provider "google") followed by one toolResult
// per call from its recorded result (isError for status error or
// cancelled, or an error response). info, warning and error records are
// shown by the CLI only and become custom entries "gemini-info" etc. A
// rewind keeps the rewound messages as an abandoned branch; the branch
// the chat went on with is written last. The summary is the session name.
package gemini
