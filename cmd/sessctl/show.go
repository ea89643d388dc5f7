package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var showCommand = &command{
	name:    "show",
	summary: "print the active branch of a session as a readable transcript",
	usage: `
Usage: sessctl show [--leaf ID] [--full] [--json] SESSION
       sessctl show --store agentuse [--project DIR] [--full] [--json] SESSION

Prints the active branch of a session, root first, as a transcript: who
said what, the assistant's text, its tool calls and their results,
compaction and branch summaries, custom messages, and model and thinking
level changes as small notes. The active branch ends at the session's leaf
(its last entry, as pi sees it); --leaf ID shows the branch that ends at
another entry instead (a unique prefix of the id is enough).

Layout of the human output (times are UTC); notes start with "--",
summaries with "==", messages with their entry id:

  -- model anthropic/claude-sonnet-4-5 [e0000001]

  [a1b2c3d4] user  2026-03-01 09:00:02  (label: start)
      the message text

  [b2c3d4e5] assistant  anthropic/claude-sonnet-4-5  2026-03-01 09:00:03  160 tokens $0.000960
      thinking: the first line of the thinking... (+3 lines)
      the assistant's text
      -> bash {"command":"make test"}

  [c3d4e5f6] tool result bash  2026-03-01 09:00:04
      the first lines of the output
      ... 37 more lines

  == compaction [d4e5f6a7] 2026-03-01 09:10:00: 45000 tokens summarised, kept from a1b2c3d4
      the summary

Thinking is folded to one line and tool results to their first lines;
--full prints both, and tool arguments, in full. Any other text (a
message, a summary) longer than 200 lines or 32 KB is cut there, with a
note of how much was left out; --full prints it whole. On a terminal,
control characters in the session are shown escaped (\u001b), and paths
with a newline or another control character are quoted. Labels are shown next to
the entry they name, whichever branch the label entry is on.

--json prints the stored lines instead, as JSONL: the header line, then
every entry of the branch, root first, byte for byte as they are in the
file (a version 1 or 2 file is shown as migrated in memory). The output is
itself a loadable session file of that one branch.

The file is opened read-only: no lock is taken and nothing is written.
SESSION is a file path, a session id or a unique id prefix (see --store).

With --store agentuse (or when SESSION is an AgentUse session directory),
SESSION is an AgentUse session id or unique prefix in the project of DIR
(default: the working directory). AgentUse sessions are linear, so --leaf
does not apply; the transcript lists each message's parts, and --json
prints what 'sessctl dump --store agentuse' prints.

Examples:
  sessctl show 390d8e15
  sessctl show --full --leaf 1a2b session.jsonl | less
  sessctl show --json 390d8e15 > branch.jsonl
  sessctl show --store agentuse 01M7ZXJ0
`,
}

func init() { register(showCommand).run = runShow }

func runShow(e *env, args []string) int {
	fs := e.flags(showCommand)
	store := storeFlag(fs)
	leaf := fs.String("leaf", "", "show the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	full := fs.Bool("full", false, "print thinking, tool arguments and tool results in full")
	asJSON := fs.Bool("json", false, "print the header and the branch's stored lines as JSONL")
	au := addAgentUseFlags(fs, false)
	pos, code := e.parseArgs(showCommand, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(pos[0]); code >= 0 {
		return code
	}
	if useAgentUse(*store, pos[0]) {
		if *leaf != "" {
			return e.usageError("--leaf does not apply to AgentUse sessions, which have no branches")
		}
		return runShowAgentUse(e, *au.project, pos[0], *full, *asJSON)
	}
	sv, err := openView(e, *store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	path, err := sv.branch(*leaf)
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	if *asJSON {
		w.Write(sv.Header.Raw)
		w.WriteByte('\n')
		for _, en := range path {
			w.Write(en.Raw)
			w.WriteByte('\n')
		}
	} else {
		_ = render.Transcript(w, sv.Session, path, *full) // a write error stays in w: Flush reports it
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// ---- the session as the read commands see it ----

// sessionView is a session opened read-only, with a snapshot of what the
// read commands print about it.
type sessionView struct {
	*render.Session
	s *engine.Session
}

// openView resolves and opens a session read-only and snapshots it,
// warning on stderr when the file is of a newer format version. The
// caller closes it.
func openView(e *env, store, arg string) (*sessionView, error) {
	path, err := resolveSession(store, arg)
	if err != nil {
		return nil, err
	}
	s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	sv := &sessionView{Session: render.Snapshot(s), s: s}
	e.warnVersion(sv.Path, sv.Header.Entry)
	return sv, nil
}

func (sv *sessionView) close() { _ = sv.s.Close() }

// branch returns the root-to-leaf path, or the path to the entry named by
// id (a full id or a unique prefix).
func (sv *sessionView) branch(id string) ([]*jsonl.Entry, error) {
	if id == "" {
		if sv.Leaf == "" {
			return nil, nil
		}
		return sv.s.BranchPath(""), nil
	}
	full, err := sv.s.ResolveEntryPrefix(id)
	if err != nil {
		return nil, err
	}
	return sv.s.BranchPath(full), nil
}
