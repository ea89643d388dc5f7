package main

import (
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
)

var contextCommand = newCommand("context", "print the model context of a session as JSON")

func init() { contextCommand.run = runContext }

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
	fc, err := engine.ReadContext(e.ctx, path, *leaf, engine.OpenOptions{})
	if err != nil {
		return e.fail(err)
	}
	e.warnVersion(fc.File, fc.Header.Entry)
	if err := render.Context(e.stdout, fc.Context); err != nil {
		return e.fail(err)
	}
	return exitOK
}
