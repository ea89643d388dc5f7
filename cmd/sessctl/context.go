package main

import (
	"fmt"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
)

var contextCommand = &command{
	name:    "context",
	summary: "print the model context of a session as JSON",
	usage: `
Usage: sessctl context [--leaf ID] SESSION

Prints what pi's buildSessionContext returns for the session: the
messages sent to the model (the latest compaction summary first, then the
kept entries, branch summaries and custom messages), the thinking level
and the model, as {"messages": [...], "thinkingLevel": ..., "model": ...}.
Stored messages are printed exactly as they are in the file.

By default the context is built at the session's leaf (its last entry);
--leaf builds it at another entry. The file is opened read-only.
SESSION is a file path, a session id or a unique id prefix (see --store).

Examples:
  sessctl context session.jsonl | jq '.messages | length'
  sessctl context --leaf 1a2b3c4d session.jsonl
`,
}

func init() { register(contextCommand).run = runContext }

func runContext(e *env, args []string) int {
	fs := e.flags(contextCommand)
	store := storeFlag(fs)
	leaf := fs.String("leaf", "", "build the context at entry `ID` instead of the leaf")
	if code := e.parse(contextCommand, fs, args); code >= 0 {
		return code
	}
	path, code := e.sessionArg(*store, fs.Args())
	if code >= 0 {
		return code
	}
	s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	var c compaction.Context
	if *leaf != "" {
		if _, ok := s.Entry(*leaf); !ok {
			return e.fail(fmt.Errorf("entry %s: %w", *leaf, engine.ErrNotFound))
		}
		c = s.ContextAt(compaction.LeafID(*leaf))
	} else {
		c = s.Context()
	}
	if err := engine.WriteContext(e.stdout, c); err != nil {
		return e.fail(err)
	}
	return exitOK
}
