// Package agentuse reads and writes AgentUse 0.15.0's session stores
// byte for byte as AgentUse does: directories of JSON files (2-space
// JSON.stringify, no trailing newline, AgentUse's key order) under
// $XDG_DATA_HOME/agentuse/project/<hash>/session/<ULID>-<agent>/, with
// session.json, one directory per message holding message.json and its
// parts (part/<id>.json) and artifacts, and child sessions under
// subagent/. The paths and names are package layout's; the format is
// described in shared/spec/agentuse-format.md.
//
// OpenStore finds a project's store as AgentUse does (its git top level,
// else its absolute path, hashed), or takes a directory (StoreOptions.Dir).
// The Store's methods are the acts on sessions, with the verbs of package
// engine's Store: Create a session, Open one for writing (by the path of
// its directory, its id or a unique id prefix), List the sessions (Info
// rows, in AgentUse's order) or walk them (Sessions, an iterator),
// Resolve a name to its session, Read a session's messages and parts, and
// Close the store. As in package engine, a Session is an open handle: it
// holds the session's writer lock until Close and adds messages
// (AddMessage), parts (AddPart with TextPart, ToolPart, ReasoningPart and
// the other part constructors), tool results (CompleteTool, FailTool,
// SuspendTool, ResumeTool), streamed tool output (CreateToolOutputStream),
// subagent sessions (CreateSubagent), updates (UpdatePart, UpdateSession)
// and the session's status, error and tokens; a session as listed is an
// Info.
//
// Walk is the one walk of AgentUse directories, which Sessions, List and
// Resolve read from and every other reader of many sessions (search, the
// viewer) uses: every session directory below a root, at any depth, with
// subagents nested under their parent, no symbolic link followed and no
// .trash. DirFiles lists one session directory's files, and Fingerprint
// sums such a listing up into the value sync and the viewer compare to
// tell that a session changed.
//
// A session recorded (the package example):
//
//	func record(ctx context.Context, store *agentuse.Store, now time.Time) error {
//		sess, err := store.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "reviewer", Name: "reviewer"}, Model: "anthropic:claude-sonnet-4-5"})
//		if err != nil {
//			return err
//		}
//		defer sess.Close()
//		msg, err := sess.AddMessage(agentuse.MessageSpec{Task: "Review the change.", ModelID: "anthropic:claude-sonnet-4-5"})
//		if err != nil {
//			return err
//		}
//		if _, err := sess.AddPart(msg, agentuse.TextPart("Looks good.", now)); err != nil {
//			return err
//		}
//		if err := sess.CompleteMessage(msg); err != nil {
//			return err
//		}
//		return sess.SetStatus(agentuse.StatusCompleted)
//	}
//
// # Deliberate differences from AgentUse
//
//   - Every read-modify-write happens under the session's writer lock
//     (session.lock inside the session directory, held from Create or
//     Open until Close, see package lock), so two writers, in one
//     process or in two, never lose each other's updates. A second writer
//     gets ErrLocked naming the holder, or waits with StoreOptions.Wait.
//   - Files are replaced atomically and durably (temporary file in the
//     same directory, fsync, rename, fsync of the directory; SyncNone
//     skips the fsyncs), created 0600 in directories created 0700 (see
//     package layout/vfs).
//   - Updating a file that does not exist is an error matching
//     ErrNotFound, not a silent no-op.
//
// Readers take no lock: AgentUse and sessctl replace files atomically, so
// a reader sees each file whole, old or new. The errors are package
// engine's (the same values), so one errors.Is serves both stores.
package agentuse
