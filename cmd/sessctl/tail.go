package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
)

var tailCommand = &command{
	name:    "tail",
	summary: "print a session's last entries, and with -f follow it as it grows",
	usage: `
Usage: sessctl tail [-f] [-n N] [--json] SESSION

SESSION is a file path, a session id or a unique prefix of one, looked up
in the store given by --store (default: pi's).

Prints the last N entries of the session file (default 10), in file
order, one line each:

  [a1b2c3d4] 09:00:02 user: the first line of the message
  [b2c3d4e5] 09:00:03 assistant anthropic/claude-sonnet-4-5 (toolUse): the text -> read, bash
  [c3d4e5f6] 09:00:04 toolResult read: the first line of the output
  [d4e5f6a7] 09:00:05 model_change anthropic/claude-haiku-4-5

Times are the entries' timestamps (UTC). --json prints the stored lines
instead, byte for byte, as JSONL.

With -f, tail then follows the file as another process (an agent, pi)
appends to it, printing each new entry when its line is complete, until
it is interrupted. It reads only what was appended, looking every 200 ms
(polling: no file notification is needed). The session is opened
read-only: no lock is taken and nothing is written. A file that is
replaced is read again; one that is removed ends tail with an error.

Examples:
  sessctl tail 390d8e15
  sessctl tail -f -n 0 390d8e15
  sessctl tail -f --json 390d8e15 | jq -c .message.role
`,
}

func init() { register(tailCommand).run = runTail }

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
	s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
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
			render.WriteEntryLine(w, en)
		}
	}
	all := s.Entries()
	for _, en := range all[max(0, len(all)-*n):] {
		print(en)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if !*follow {
		return exitOK
	}
	for en, err := range s.Follow(e.ctx, engine.FollowInterval) {
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
