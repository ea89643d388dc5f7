package main

import (
	"flag"

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
	replaceSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "replace" {
			replaceSet = true
		}
	})
	switch {
	case *omit == replaceSet:
		return e.usageError("give one of --omit and --replace TEXT")
	case replaceSet && *replace == "":
		return e.usageError("--replace TEXT is empty: to leave the message out, use --omit")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	s, err := openForWrite(e.ctx, path, *wait, "sessctl context-edit")
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	target, err := s.ResolveEntry(pos[1])
	if err != nil {
		return e.failEntry(err, pos[0])
	}
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
		b := jsonl.NewObject(128).String("entryId", id).String("targetId", target)
		if replaceSet {
			b.String("replacement", *replace)
		} else {
			b.Null("replacement")
		}
		jsonOut(e.stdout, b.Bytes())
	}
	return exitOK
}
