package main

import (
	"github.com/sessctl/sessctl/internal/jsonl"
)

var contextEditCommand = newCommand("context-edit", "omit or replace a message in the model context, keeping the history")

func init() { contextEditCommand.run = runContextEdit }

func runContextEdit(e *env, args []string) int {
	fs := e.flags(contextEditCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	omit := fs.Bool("omit", false, "leave the entry's message out of the model's context")
	replace := fs.String("replace", "", "give the model `TEXT` in place of the entry's content")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(contextEditCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if len(pos) != 2 {
		return e.usageError("expected SESSION and ENTRY")
	}
	replaceSet := isSet(fs, "replace")
	switch {
	case *omit == replaceSet:
		return e.usageError("give one of --omit and --replace TEXT")
	case replaceSet && *replace == "":
		return e.usageError("--replace TEXT is empty: to leave the message out, use --omit")
	}
	s, target, code := e.openEntry(*store, pos[0], pos[1], *wait)
	if code >= 0 {
		return code
	}
	defer s.Close()
	var content any // nil: omit
	if replaceSet {
		content = *replace
	}
	id, err := s.AppendContextEdit(target, content)
	if err != nil {
		return e.fail(err)
	}
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		jsonOut(e.stdout, jsonl.NewObject(128).String("entryId", id).String("targetId", target).StringOrNull("replacement", opt(*replace, replaceSet)).Bytes())
	}
	return exitOK
}
