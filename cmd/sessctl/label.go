package main

import (
	"fmt"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var labelCommand = newCommand("label", "show, set or clear the label of an entry")

func init() { labelCommand.run = runLabel }

func runLabel(e *env, args []string) int {
	fs := e.flags(labelCommand)
	store := storeFlag(fs)
	wait := waitFlag(fs)
	clearIt := fs.Bool("clear", false, "clear the label (appends a label entry without one)")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(labelCommand, fs, args); code >= 0 {
		return code
	}
	pos := fs.Args()
	if len(pos) < 2 || len(pos) > 3 {
		return e.usageError("expected SESSION, ENTRY and an optional TEXT")
	}
	switch {
	case *clearIt && len(pos) == 3:
		return e.usageError("--clear takes no TEXT")
	case len(pos) == 3 && pos[2] == "":
		return e.usageError("TEXT is empty: to clear the label, use --clear")
	case len(pos) == 2 && !*clearIt:
		return showLabel(e, *store, pos[0], pos[1], *asJSON)
	}
	s, target, code := e.openEntry(*store, pos[0], pos[1], *wait)
	if code >= 0 {
		return code
	}
	defer s.Close()
	text := ""
	if !*clearIt {
		text = pos[2]
	} else if _, ok := s.Label(target); !ok {
		fmt.Fprintf(e.stderr, "sessctl: label: %s has no label; nothing to clear\n", human.QuotePath(target))
		if *asJSON {
			jsonOut(e.stdout, jsonl.NewObject(128).Null("entryId").String("targetId", target).Null("label").Bytes())
		}
		return exitOK
	}
	id, err := s.AppendLabelChange(target, text)
	if err != nil {
		return e.fail(err)
	}
	if err := s.Close(); err != nil {
		return e.fail(err)
	}
	if *asJSON {
		jsonOut(e.stdout, jsonl.NewObject(128).String("entryId", id).String("targetId", target).StringOrNull("label", opt(text, !*clearIt)).Bytes())
	}
	return exitOK
}

// showLabel prints the label of an entry: its text and a newline, or
// nothing (and a note on stderr) when it has none.
func showLabel(e *env, store, sessionArg, entry string, asJSON bool) int {
	path, err := resolveSession(store, sessionArg)
	if err != nil {
		return e.fail(err)
	}
	s, err := openReadOnly(e.ctx, path)
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	target, err := s.ResolveEntry(entry)
	if err != nil {
		return e.failEntry(err, sessionArg)
	}
	label, ok := s.Label(target)
	switch {
	case asJSON:
		jsonOut(e.stdout, jsonl.NewObject(128).String("targetId", target).StringOrNull("label", opt(label, ok)).Bytes())
	case ok:
		fmt.Fprintln(e.stdout, label)
	default:
		fmt.Fprintf(e.stderr, "sessctl: label: %s has no label\n", human.QuotePath(target))
	}
	return exitOK
}
