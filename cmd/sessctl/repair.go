package main

import (
	"bufio"
	"fmt"

	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/human"
)

var repairCommand = &command{
	name:    "repair",
	summary: "salvage a damaged session file into a new, valid one beside it",
	usage:   helpText("repair"),
}

func init() { register(repairCommand).run = runRepair }

func runRepair(e *env, args []string) int {
	fs := e.flags(repairCommand)
	store := storeFlag(fs)
	out := fs.String("o", "", "write the repaired session to `OUT` (must not exist)")
	asJSON := fs.Bool("json", false, "print what was changed as JSON")
	if code := e.parse(repairCommand, fs, args); code >= 0 {
		return code
	}
	path, code := e.sessionArg(*store, fs.Args())
	if code >= 0 {
		return code
	}
	res, err := repair.File(path, repair.Options{Output: *out})
	if err != nil {
		return e.fail(err)
	}
	return writeRepairResult(e, res, *asJSON)
}

func writeRepairResult(e *env, r *repair.Result, asJSON bool) int {
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		emitJSON(w, r)
	} else {
		r.WriteText(w)
		if r.Output != nil {
			fmt.Fprintf(w, "Check it and put it in place: sessctl verify %s && mv %s %s\n",
				human.ShellQuote(*r.Output), human.ShellQuote(*r.Output), human.ShellQuote(r.Path))
		}
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}
