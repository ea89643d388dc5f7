// Package engine is sessctl's public API for pi/indusagi JSONL session
// trees: OpenStore opens a Store once, its methods do everything a store
// is asked (create, open, list, fork, trash, ...), and a Session is one
// open session: pi's SessionManager, with durability, one writer per
// session and recovery. AgentUse's part/message directories have their
// own package, engine/agentuse, with a Store of the same verbs and this
// package's errors.
//
// # Store
//
// OpenStore opens pi's store (<agentDir>/sessions, one directory per
// cwd), indusagi's, or any directory of session files (StoreOptions.Dir),
// with what is per store: the filesystem, the clock and ids, the sync
// policy, the cache directory, a replicator. Its methods are the acts:
// Create, Open (a path, a session id or a unique id prefix),
// ContinueRecent, List and Sessions (pi's listing fields; cwd "" for
// every cwd), Resolve, Fork, Trash, Migrate, Tail, Info, and Files, the
// one walk of its files, which decides what belongs to a store for every
// caller.
//
// Two package functions take a path alone, with the default StoreOptions,
// and need no store: OpenFile opens a session file (Store.Open of a path
// is the same with the store's options), and ReadContext reads just the
// model context of one (a viewer, a resumed agent's first request),
// holding the context's lines, not the file's.
//
// # Session
//
// Session mirrors pi's SessionManager: AppendMessage, AppendModelChange,
// AppendThinkingLevelChange, AppendCompaction, AppendCustomEntry,
// AppendCustomMessageEntry, AppendLabelChange and AppendSessionInfo add
// entries; Branch, ResetLeaf and BranchWithSummary move the leaf;
// Entries, Entry, LeafID, BranchPath, Tree, Children, Label, Name,
// Header and Context answer as pi does; NewSession, CreateBranchedSession
// and NewChild start another session from it. Ids and the clock are
// injectable (StoreOptions), so written bytes can be compared with pi's.
//
// Messages are the Go types of package message; a message entry
// (Entry) decodes to one with message.Decode(e.Message()). A minimal
// agent (the package example):
//
//	func agent(ctx context.Context, st *engine.Store, cwd string, reply *message.Assistant) error {
//		s, err := st.Create(ctx, cwd, engine.CreateOptions{})
//		if err != nil {
//			return err
//		}
//		defer s.Close()
//		s.AppendModelChange("anthropic", "claude-sonnet-4-5")
//		s.AppendMessage(message.NewUser("hi", time.Now()))
//		if _, err := s.AppendMessage(reply); err != nil { // the file appears now (pi's rule)
//			return err
//		}
//		next := s.Context() // what to send to the model next
//		model, _ := next.CurrentModel()
//		fmt.Println(len(next.Messages), "messages for", model.Provider, model.ModelID)
//		return nil
//	}
//
// # Which pi
//
// This sessctl follows pi 1.6.0 (npm @earendil-works/pi-coding-agent;
// up to 0.73.1 @mariozechner/pi-coding-agent), the newest release: where
// pi's releases answer differently, it answers as 1.6.0 does
// (docs/compatibility.md). 1.6.0 adds usage and context_edit entries
// (Session.AppendUsage, Session.AppendContextEdit), system messages,
// compactions with a systemMessage checkpoint and retain-none
// compactions, builds the context as a projection (context edits
// applied) and prepares compactions over it. Since 0.58.3: a
// session_info entry with an empty name clears the name; labels keep the
// time they were set at when a session is branched, and the tree reports
// it; new session ids are time-ordered (UUID version 7); compaction
// starts its window at the previous compaction's first kept entry and
// asks the summariser to reason at the session's thinking level. The
// format is the same (version 3) for both, and everything else is tested
// against 0.58.3 too, the release the conformance corpus was recorded
// with.
//
// # Durability
//
// An append is one write of the whole line on an O_APPEND descriptor.
// Under SyncEach (the default) it is fsynced before the call returns: an
// acknowledged entry survives a power cut. Under SyncNone it survives a
// crash of the process but not of the machine. After a write or sync error
// the session refuses further writes until it is reopened. What a failed
// append wrote (part of its line on a full disk, or a line whose sync
// failed) is cut off again when the file still ends with exactly those
// bytes, so the file is as it was; when another process appended after
// them they stay, and the error says so. New files and rewrites
// (migration, recovery) are atomic. A new session's file is written when
// it first holds an assistant message, as in pi; CreateOptions.WriteAtOnce
// writes it at the first append, and Flush at once.
//
// No history starts by accident: opening a path that does not exist is
// ErrNotFound (OpenOptions.Create asks for pi's new session there), and
// AppendMessage refuses what is not a message pi knows.
//
// A write-mode open changes nothing in the file. What the file needs
// before it can be appended to (a version 1 or 2 file's migration, an
// empty file's header, a missing final newline, cutting a torn last line,
// removing temporary files an interrupted write left) is done by the first
// write, after the call checked its arguments: a call that fails leaves
// the file byte for byte as it was. Flush does it without appending.
//
// # One writer per session
//
// Opening a session for writing takes its writer lock (a kernel lock on
// <file>.lock, see package lock) until Close; a second writer gets
// ErrLocked with the holder named, or waits with OpenOptions.Wait.
// Read-only opens (OpenOptions.ReadOnly) take no lock, never block and
// never write. No lock file is left beside what is not a session, nor
// beside a path that was only looked at.
//
// pi takes no lock and appends beside sessctl. Before every write a
// session compares the file with what it has read (one fstat when nothing
// changed): lines another process appended are read and indexed as a
// reload would, so the new entry hangs from the file's last entry. A last
// line without its newline is never cut while some process holds the file
// open for writing: the write waits for it (StoreOptions.TornWait) and
// indexes it when it is complete, or fails with ErrBusy naming the
// process. A torn line nobody holds open is abandoned; it is cut only
// after the file's size and the line's bytes were checked again just
// before the truncate. Writes never hang an entry below a parent-id loop
// (*LoopError): pi would never finish loading the file.
//
// # Deliberate differences from pi
//
// A file without a valid header is never truncated: Open fails with a
// *CorruptError naming the file and line. A loaded file is appended to
// plainly (pi's duplicate-header bug is not reproduced). At the first
// write an abandoned torn last line is quarantined to <file>.torn-<ms> and
// cut off, and a complete last line without '\n' gets one. Lines that are
// valid JSON but not objects are skipped. Parent cycles and self-parents
// never loop. Migrations are atomic and keep <file>.v<N>.bak. A session
// file removed or replaced behind a writer is an error (ErrVanished),
// never re-created without its header. Files are 0600.
package engine
