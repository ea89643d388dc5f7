package main

import (
	"fmt"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/lock"
)

var whoCommand = newCommand("who", "show which process holds a session's writer lock")

func init() { whoCommand.run = runWho }

func runWho(e *env, args []string) int {
	fs := e.flags(whoCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(whoCommand, fs, args); code >= 0 {
		return code
	}
	path, code := e.sessionArg(*store, fs.Args())
	if code >= 0 {
		return code
	}
	lp := sessionfile.LockPath(path)
	st, err := lock.Inspect(lp)
	if err != nil {
		return e.fail(err)
	}
	if *asJSON {
		fmt.Fprintf(e.stdout, "%s\n", render.LockStatusJSON(path, lp, st))
		return exitOK
	}
	_ = render.LockStatus(e.stdout, path, lp, st)
	return exitOK
}
