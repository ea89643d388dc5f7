package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
)

var tailCommand = newCommand("tail", "print a session's last entries, and with -f follow it as it grows")

func init() { tailCommand.run = runTail }

func runTail(e *env, args []string) int {
	fs := e.flags(tailCommand)
	store := storeFlag(fs)
	follow := fs.Bool("f", false, "follow the file: print entries as they are appended, until interrupted")
	n := fs.Int("n", 10, "print the last `N` entries first (0: none)")
	asJSON := fs.Bool("json", false, "print the stored lines as JSONL")
	if code := e.parse(tailCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if *n < 0 {
		return e.usageError("-n must not be negative")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	path, err := resolveSession(*store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	// Read from the end: the last entries cost their lines, not the file.
	s, err := fileStore(path, engine.StoreOptions{}).Tail(e.ctx, path, *n)
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	print := func(en *engine.Entry) {
		if *asJSON {
			w.Write(en.Raw)
			w.WriteByte('\n')
		} else {
			_ = render.WriteEntryLine(w, en) // a write error stays in w: Flush reports it
		}
	}
	for _, en := range s.Entries() {
		print(en)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if !*follow {
		return exitOK
	}
	for en, err := range s.Follow(e.ctx, 0) {
		if err != nil {
			return e.fail(err)
		}
		print(en)
		if err := w.Flush(); err != nil {
			return e.fail(err)
		}
	}
	return exitOK
}
