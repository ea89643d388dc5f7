package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/human"
)

var repairCommand = newCommand("repair", "salvage a damaged session file into a new, valid one beside it")

func init() { repairCommand.run = runRepair }

func runRepair(e *env, args []string) int {
	fs := e.flags(repairCommand)
	store := storeFlag(fs)
	out := fs.String("o", "", "write the repaired session to `OUT` (must not exist)")
	asJSON := fs.Bool("json", false, "print what was changed as JSON")
	if code := e.parse(repairCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 1 {
		if st, err := os.Stat(fs.Arg(0)); err == nil && st.IsDir() {
			if *out != "" {
				return e.usageError("-o goes with a SESSION, not a directory")
			}
			return repairLeftovers(e, fs.Arg(0), *asJSON)
		}
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

// repairLeftovers removes what writers that never wrote their session
// left below dir (repair.ClearLeftovers) and says what it removed.
func repairLeftovers(e *env, dir string, asJSON bool) int {
	removed, held, err := repair.ClearLeftovers(e.ctx, dir)
	w := bufio.NewWriter(e.stdout)
	if asJSON {
		heldPaths := []string{}
		for _, l := range held {
			heldPaths = append(heldPaths, l.Path)
		}
		emitJSON(w, struct {
			Removed []string `json:"removed"`
			Held    []string `json:"held"`
		}{append([]string{}, removed...), heldPaths})
	} else {
		_ = repair.WriteCleared(w, dir, removed) // a write error stays in w: Flush reports it
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	for _, l := range held {
		fmt.Fprintf(e.stderr, "sessctl: repair: kept %s: a running writer of %s holds it\n", human.QuotePath(l.Path), human.QuotePath(filepath.Base(l.Session)))
	}
	if err != nil {
		return e.fail(err)
	}
	return exitOK
}
