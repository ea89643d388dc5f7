package main

import (
	"bufio"

	"github.com/sessctl/sessctl/engine/repair"
)

var repairCommand = &command{
	name:    "repair",
	summary: "salvage a damaged session file into a new, valid one beside it",
	usage: `
Usage: sessctl repair [-o OUT] [--json] SESSION

Reads a damaged session file and writes a valid one, keeping every entry
that can be read. The original is never modified: the result goes to OUT,
by default <name>.repaired-<unix ms>.jsonl in the same directory, which
must not exist yet (nothing is ever overwritten). The new file passes
'sessctl verify'; repair checks that before writing it. When verify finds
nothing wrong, nothing is written.

What it does, in this order:

  - lines that are not JSON objects are dropped, except for the entries
    found whole inside them (pi glues its next entry onto a last line
    that has no newline, and an interrupted write leaves a fragment next
    to whole entries); a torn last line (an unfinished write) is cut off;
    every kept line ends in a newline; the original keeps the dropped
    bytes;
  - the first "session" line with a string id becomes the header, moved
    to the top if garbage or entries came before it; other header lines
    are dropped. Without one, a header is made: the id from a header whose
    id is a number, else from the file name when it has pi's
    <time>_<id>.jsonl form, else a UUID made from a hash of the file; the
    timestamp from that header, the file name, the first entry, or the
    time of the repair; the cwd from that header, or "" (unknown);
  - a version 1 or 2 file is migrated to version 3; a version above 3 is
    refused (exit 4): this sessctl cannot know what it means;
  - an entry without a string id gets a new one; of entries sharing an id,
    the first keeps it, a later exact copy of an earlier line is dropped,
    and any other later entry gets a new id. A reference to a shared id
    (parentId, a label's targetId, a compaction's firstKeptEntryId, a
    branch summary's fromId) goes to the copy written most recently
    before the referring line, or to the first copy when none came
    before: ids are always made before they are referred to;
  - an entry whose parent is missing, not a string, itself, or on a
    parent cycle (the earliest entry of each cycle) is re-parented. When
    the missing parent was a dropped line whose id and parentId can still
    be read, the entry takes that line's parent (so only the lost line
    is skipped). Otherwise it hangs from the entry written just before it
    in the file, or becomes a root when there is none. pi writes every
    entry as a child of the leaf of the moment, which is usually the line
    before, so this keeps the most of the conversation on one branch:
    pi's context at the leaf walks parent links, and a root would cut it
    off there. A parent that would close a loop is never chosen.

New ids are 8 hex digits derived from the old id and line, so repairing
the same file twice gives the same result.

Prints each change with its line in the original file. --json prints one
object instead:

  {"path": FILE, "output": OUT, "changed": BOOL, "entries": N,
   "dropped": N, "changes": [{"kind": KIND, "line": N, "id": ID,
   "message": TEXT}]}

where "output" is null when nothing was written, and KIND is one of
dropped-line, split-line, cut-torn-tail, added-newline, added-header, moved-header,
dropped-header, migrated, added-id, dropped-duplicate, renamed-duplicate,
updated-reference, reparented.

Afterwards, check the result and put it in place of the original:
  sessctl verify OUT && mv OUT FILE

SESSION is a file path, a session id or a unique id prefix (see --store).
The file is read without a lock.

Examples:
  sessctl repair broken.jsonl
  sessctl repair -o fixed.jsonl 390d8e15
`,
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
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}
