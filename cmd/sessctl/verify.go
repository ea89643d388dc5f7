package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/sessctl/sessctl/engine/repair"
)

var verifyCommand = &command{
	name:    "verify",
	summary: "check session files for damage (exit 4 when anything is wrong)",
	usage: `
Usage: sessctl verify [--json] SESSION...

Checks session files and reports, with line numbers, everything that makes
a file differ from what pi writes. Each SESSION is a file path, a session
id or unique id prefix (see --store), or a directory, which is searched
recursively for *.jsonl files, leaving out the .trash directories where
'sessctl delete' puts sessions (name a .trash directory itself to check
it). Files are read without a lock and never written; 'sessctl repair'
salvages a damaged file into a new one.

Problems (the exit status is 4 when any file has one):

  empty             the file is empty or holds only whitespace
  no-header         the first JSON object is not a "session" header
  bad-header        the header's id is not a string
  version           the header's version is above 3 (or not a number)
  extra-header      a second "session" line (pi's duplicate-header bug)
  malformed         a line that is not valid JSON
  not-object        a line that is valid JSON but not an object
  torn-tail         the last line is an unfinished fragment without a
                    newline (an interrupted write, or one still going on:
                    pi takes no lock)
  no-final-newline  the last line is complete but has no newline; pi's
                    next append would glue onto it and lose both lines
  bad-id            an entry without a string id
  duplicate-id      an id used by more than one entry
  bad-parent        an entry without a parentId member, or with one that
                    is neither a string nor null
  missing-parent    a parentId that names no entry
  self-parent       an entry that is its own parent
  cycle             entries whose parent links form a loop

Notes (reported, but the file passes):

  legacy-version    version 1 or 2 (pi migrates it on open, sessctl at its
                    first write; the tree checks run on the migrated
                    entries)
  crlf              lines ending in CRLF
  trailing-space    whitespace after the last newline
  unknown-type      entries of a type pi does not know
  no-cwd            a header without a string cwd
  label-target      a label for an entry that does not exist
  bad-timestamp     an entry timestamp that does not parse (tree order is
                    then unspecified)
  temp-file         a temporary file beside the session that a killed or
                    crashed sessctl write left (<file>.tmp-<hex>, for one);
                    the session's next write removes it (unless that
                    sessctl write is still running)

Duplicate ids, parents and cycles are judged as pi indexes the file: the
last entry with an id is the one its children hang from.

--json prints one object per file, one per line:

  {"path": FILE, "ok": BOOL, "sessionId": ID, "version": N, "lines": N,
   "entries": N, "problems": [FINDING...], "notes": [FINDING...]}

where "sessionId" and "version" are null without a valid header, "entries"
counts the JSON object lines other than headers, and a FINDING is
{"kind": KIND, "line": N, "id": ID, "message": TEXT} ("line" and "id"
only where they apply; "line" is 1-based).

Exit status: 0 when every file passes, 4 when any has a problem, and the
usual codes when a SESSION cannot be found (5) or read (1).

Examples:
  sessctl verify 390d8e15
  sessctl verify ~/.pi/agent/sessions
  sessctl verify --json broken.jsonl | jq '.problems[].kind'
`,
}

func init() { register(verifyCommand).run = runVerify }

func runVerify(e *env, args []string) int {
	fs := e.flags(verifyCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	if code := e.parse(verifyCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return e.usageError("expected at least one SESSION or directory")
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	code := exitOK
	worse := func(c int) {
		// Damage found outranks a name that could not be resolved.
		if code != exitCorrupt && c != exitOK {
			code = c
		}
	}
	check := func(path string) {
		rep, err := repair.VerifyFile(path)
		if err != nil {
			w.Flush()
			worse(e.fail(err))
			return
		}
		if !rep.OK {
			code = exitCorrupt
		}
		if *asJSON {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(rep)
		} else {
			rep.WriteText(w)
		}
	}
	for _, arg := range fs.Args() {
		if err := e.ctx.Err(); err != nil {
			w.Flush()
			return e.fail(err)
		}
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			files, err := repair.SessionFiles(arg)
			if err != nil {
				w.Flush()
				worse(e.fail(err))
				continue
			}
			if len(files) == 0 {
				fmt.Fprintf(e.stderr, "sessctl: verify: no *.jsonl files under %s\n", arg)
			}
			for _, f := range files {
				check(f)
			}
			continue
		}
		path, err := resolveSession(*store, arg)
		if err != nil {
			w.Flush()
			worse(e.fail(err))
			continue
		}
		check(path)
	}
	return code
}
