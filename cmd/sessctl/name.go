package main

import (
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var nameCommand = &command{
	name:    "name",
	summary: "show or set a session's display name",
	usage: `
Usage: sessctl name SESSION [TEXT]

Without TEXT, prints the session's name: the last non-empty name set in
the file, as pi shows it in its session list (nothing is printed when the
session has none). With TEXT, sets the name, as pi's /name does, by
appending a session_info entry with the trimmed TEXT. pi 0.58.3 cannot
clear a name (it skips empty names when reading), so an empty TEXT is
refused.

Setting a name locks the session while it is written (exit 3 when another
writer has it; see --wait). --json prints {"name"} (null when unnamed),
plus "entryId" when a name was set.

Examples:
  sessctl name 7f3a
  sessctl name 7f3a 'parser rewrite'
  sessctl name --json 7f3a | jq -r .name
`,
}

func init() { register(nameCommand).run = runName }

func runName(e *env, args []string) int {
	fs := e.flags(nameCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code := e.parseArgs(nameCommand, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return e.usageError("expected SESSION and an optional TEXT")
	}
	if len(pos) == 2 && jsonl.JSTrim(pos[1]) == "" {
		return e.usageError("an empty name cannot clear the name: pi ignores empty names")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if len(pos) == 1 {
		s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
		if err != nil {
			return e.fail(err)
		}
		defer s.Close()
		name, ok := s.Name()
		if *asJSON {
			b := jsonl.NewObject(64)
			if ok {
				b.String("name", name)
			} else {
				b.Null("name")
			}
			jsonOut(e.stdout, b.Bytes())
			return exitOK
		}
		if ok {
			fmt.Fprintln(e.stdout, name)
		} else {
			fmt.Fprintln(e.stderr, "sessctl: name: the session has no name")
		}
		return exitOK
	}
	s, err := openForWrite(e.ctx, path, *wait, engine.Options{Command: "sessctl name"})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	id, err := s.AppendSessionInfo(pos[1])
	if err != nil {
		return e.fail(err)
	}
	name, _ := s.Name()
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		jsonOut(e.stdout, jsonl.NewObject(64).String("name", name).String("entryId", id).Bytes())
	}
	return exitOK
}
