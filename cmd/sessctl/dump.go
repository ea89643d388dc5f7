package main

import (
	"slices"
	"strings"

	"github.com/sessctl/sessctl/engine"
)

var dumpCommand = &command{
	name:    "dump",
	summary: "print a session's full state as JSON",
	usage: `
Usage: sessctl dump [--context-by-leaf] [--fields LIST] SESSION
       sessctl dump --store agentuse [--project DIR] SESSION

SESSION is a file path, a session id or a unique prefix of one, looked up
in the store given by --store (default: pi's).

Prints the state of a session as one JSON object: sessionId,
sessionFile, sessionDir, cwd, isPersisted, header, leafId, leafEntryId,
sessionName, entries (as stored), branch (root to leaf ids), tree (pi's
getTree as {id, type, label?, children}), children, labels, context
(pi's buildSessionContext) and sessionInfo (the file's listing fields).
This is the state-object format of the pi conformance corpus. The file is
opened read-only: nothing is written, no lock is taken, and a version 1 or
2 file is migrated in memory only.

With --store agentuse (or when SESSION is an AgentUse session directory),
SESSION is an AgentUse session id or unique prefix in the project of DIR
(default: the working directory), and the output is one 2-space indented
JSON object: format ("agentuse"), id, dir, parentSessionID, children
(ids), session, tools and context (the stored files, null when absent),
messages ([{id, message, parts}] in AgentUse's message and part order),
files (relative paths) and problems ([{path, error}]). Damaged files are
also reported on stderr, and the exit code is then 4.

Examples:
  sessctl dump 390d8e15
  sessctl dump ~/.pi/agent/sessions/--home-me-proj--/2026-03-01T09-00-00-123Z_<id>.jsonl
  sessctl dump --context-by-leaf session.jsonl | jq .contextByLeaf
  sessctl dump --fields leafId,branch,context big-session.jsonl
  sessctl dump --store agentuse 01M7ZXJ0
`,
}

func init() { register(dumpCommand).run = runDump }

func runDump(e *env, args []string) int {
	fs := e.flags(dumpCommand)
	store := storeFlag(fs)
	only := fs.String("fields", "", "print only these comma-separated top-level `FIELDS` (e.g. leafId,branch,context); an unknown name is an error")
	byLeaf := fs.Bool("context-by-leaf", false, "add contextByLeaf and contextAtNullLeaf (grows with the square of the session length)")
	au := addAgentUseFlags(fs, false)
	if code := e.parse(dumpCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	if useAgentUse(*store, fs.Arg(0)) {
		if *only != "" {
			return e.usageError("--fields applies to JSONL sessions, not AgentUse ones")
		}
		return runDumpAgentUse(e, au, fs.Arg(0))
	}
	o := engine.StateOptions{ContextByLeaf: *byLeaf, NoInfo: true}
	if *only != "" {
		known := engine.StateFields(o)
		o.Fields = map[string]bool{}
		for _, f := range strings.Split(*only, ",") {
			f = strings.TrimSpace(f)
			switch {
			case f == "":
				continue
			case slices.Contains(known, f):
				o.Fields[f] = true
			case f == "contextByLeaf" || f == "contextAtNullLeaf":
				return e.usageError("field %q needs --context-by-leaf", f)
			default:
				return e.usageError("unknown field %q in --fields; the fields are %s", f, strings.Join(known, ", "))
			}
		}
		if len(o.Fields) == 0 {
			return e.usageError("--fields names no field; the fields are %s", strings.Join(known, ", "))
		}
	}
	path, err := resolveSession(*store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	// The listing fields describe the file as it is on disk, before any
	// in-memory migration, as pi's list() sees it.
	info, infoErr := engine.ReadInfo(nil, path)
	s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	if infoErr == nil {
		o.Info, o.NoInfo = info, false
	}
	if err := s.WriteState(e.stdout, o); err != nil {
		return e.fail(err)
	}
	return exitOK
}
