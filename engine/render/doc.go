// Package render turns a pi session, or one branch of it, into what
// people read: Transcript is the terminal transcript of 'sessctl show',
// Tree and TreeJSON the tree of 'sessctl tree', and Markdown, HTML and
// JSON the documents of 'sessctl export', EntryLine the one-line entry
// descriptions of 'sessctl tail', and SessionStatsText and
// StoreStatsText the tables of 'sessctl stats'. Each works on a Session, a
// snapshot of an open engine.Session, and a branch (root first, as
// engine.Session.BranchPath gives it):
//
//	func share(w io.Writer, s *engine.Session) error {
//		return render.Markdown(w, render.Snapshot(s), s.BranchPath(""), render.Options{Redactor: redact.Rules{}})
//	}
//
// AgentUseTranscript and AgentUseJSON do the same for an AgentUse session
// (agentuse.Contents): the transcript of 'sessctl show' and the dump of
// 'sessctl dump --store agentuse'.
//
// Open opens a session file read-only as such a Session (whole, or as an
// engine.View for the renderers that go through it in order).
//
// AgentUseList, AgentUseTree and ListPlacesJSONSeq list AgentUse
// sessions, alone or after the JSONL ones. A PlaceListing is what
// 'sessctl list' prints, table or JSON: every session of a set of
// layout.Place values of both formats (ListPlaces), one store's
// (ListStore) or rows read elsewhere (Rows). The reports of commands are
// here too: CompactionReport ('sessctl compact'), PlaceStats ('sessctl
// stats --all') and LockStatus ('sessctl who').
//
// The documents can be redacted (Options.Redactor; package redact's Rules
// is one). Redaction fails closed: when a line cannot be masked, the
// renderer stops with an error matching ErrRedact and never shows the
// line unmasked. The output is streamed, so on an error part of it may
// have been written: a caller that must write all or nothing writes to a
// temporary file or a buffer first.
package render
