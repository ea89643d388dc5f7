package main

import (
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var labelCommand = &command{
	name:    "label",
	summary: "set or clear the label of an entry",
	usage:   helpText("label"),
}

func init() { register(labelCommand).run = runLabel }

func runLabel(e *env, args []string) int {
	fs := e.flags(labelCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(labelCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
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
