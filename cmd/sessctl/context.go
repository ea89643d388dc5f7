package main

import (
	"fmt"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
)

var contextCommand = &command{
	name:    "context",
	summary: "print the model context of a session as JSON",
	usage:   helpText("context"),
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
