package main

import (
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var labelCommand = &command{
	name:    "label",
	summary: "set or clear the label of an entry",
	usage: `
Usage: sessctl label SESSION ENTRY [TEXT]

Sets the label of ENTRY to TEXT, as pi's /tree label does; without TEXT,
or with an empty TEXT, clears it. The label is a label entry appended to
the session (pi's appendLabelChange); labels show in 'sessctl tree' and in
pi's tree view, whatever branch the entry is on. A TEXT that starts with
'-' goes after '--'.

ENTRY is an entry id or a unique prefix of one ('sessctl tree SESSION'
shows them); an unknown ENTRY exits 5 and suggests close ids. The session
is locked while it is written (exit 3 when another writer has it; see
--wait). Prints nothing; --json prints {"entryId", "targetId", "label"}
(label null when cleared).

Examples:
  sessctl label 7f3a 1a2b3c4d 'before the refactor'
  sessctl label 7f3a 1a2b3c4d            # clear it
  sessctl label 7f3a 1a2b -- '-wip-'
`,
}

func init() { register(labelCommand).run = runLabel }

func runLabel(e *env, args []string) int {
	fs := e.flags(labelCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code := e.parseArgs(labelCommand, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) < 2 || len(pos) > 3 {
		return e.usageError("expected SESSION, ENTRY and an optional TEXT")
	}
	var text *string
	if len(pos) == 3 {
		text = &pos[2]
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	s, err := openForWrite(e.ctx, path, *wait, engine.Options{Command: "sessctl label"})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	target, err := s.ResolveEntry(pos[1])
	if err != nil {
		return e.failEntry(err, pos[0])
	}
	id, err := s.AppendLabelChange(target, text)
	if err != nil {
		return e.fail(err)
	}
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		b := jsonl.NewObject(128).String("entryId", id).String("targetId", target)
		if text == nil || *text == "" {
			b.Null("label")
		} else {
			b.String("label", *text)
		}
		jsonOut(e.stdout, b.Bytes())
	}
	return exitOK
}
