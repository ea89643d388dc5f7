package main

import (
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
)

var nameCommand = newCommand("name", "show or set a session's display name")

func init() { nameCommand.run = runName }

func runName(e *env, args []string) int {
	fs := e.flags(nameCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(nameCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if len(pos) < 1 || len(pos) > 2 {
		return e.usageError("expected SESSION and an optional TEXT")
	}
	path, err := resolveSession(*store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if len(pos) == 1 {
		s, err := openReadOnly(e.ctx, path)
		if err != nil {
			return e.fail(err)
		}
		defer s.Close()
		name, ok := s.Name()
		switch {
		case *asJSON:
			jsonOut(e.stdout, jsonl.NewObject(64).StringOrNull("name", opt(name, ok)).Bytes())
		case ok:
			fmt.Fprintln(e.stdout, name)
		default:
			fmt.Fprintln(e.stderr, "sessctl: name: the session has no name")
		}
		return exitOK
	}
	s, err := openForWrite(e.ctx, path, *wait, "sessctl name")
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	id, err := s.AppendSessionInfo(pos[1])
	if err != nil {
		return e.fail(err)
	}
	name, named := s.Name() // an empty TEXT cleared the name
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		jsonOut(e.stdout, jsonl.NewObject(64).StringOrNull("name", opt(name, named)).String("entryId", id).Bytes())
	}
	return exitOK
}
