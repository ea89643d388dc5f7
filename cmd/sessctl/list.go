package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout"
)

var listCommand = &command{
	name:    "list",
	summary: "list sessions, newest first",
	usage: `
Usage: sessctl list [--dir DIR | --cwd DIR | --all] [--store pi|indusagi] [--json] [--no-index]
       sessctl list --store DIR [--json] [--no-index]
       sessctl list --agentuse [--project DIR] [--subagents] [--json]

Lists the sessions of the current directory's project (pi's list()), or of
another working directory (--cwd), of an explicit session directory
(--dir), or of every project (--all, pi's listAll()). Sessions are sorted
by their last user or assistant message, newest first.

The human table shows the modification time, the number of messages, the
session id and the name or first message. --json prints pi's SessionInfo
objects: path, id, cwd, name, parentSessionPath, created, modified,
messageCount, firstMessage, allMessagesText; and "dateFromFile": true for
an imported session whose source recorded no date, so that its dates are
its source file's modification time (marked * in the table).

Listing keeps a cache of each directory's session summaries under the user
cache directory ($XDG_CACHE_HOME/sessctl/list-index, or the system's cache
directory), never in the session directory; it is used only for files
whose size and modification time are unchanged and is safe to delete.
--no-index reads every file.

--store says which store, as for the other commands: pi (the default:
PI_CODING_AGENT_DIR, default ~/.pi/agent), indusagi (INDUSAGI_AGENT_DIR,
INDUSAGI_CODING_AGENT_DIR, INDUSAGI_DIR, default ~/.indusagi/agent; the
same as --indusagi), agentuse (the same as --agentuse), or a directory:
every session file under it is listed, searched recursively as the other
commands look session ids up there (symbolic links to directories are not
followed, .trash is left out).

Files named *.jsonl that cannot be read (permission denied, a broken or
looping symbolic link, a named pipe or other special file) are left out
and reported on stderr, one line each; the other sessions are listed all
the same, and list then exits 1. Files that are not sessions (no session
header) are left out silently, as pi does. A --dir or --store directory
that does not exist is an error (exit 5).

--agentuse lists AgentUse sessions instead: those of the project in DIR
(default: the working directory), stored in $XDG_DATA_HOME (default
~/.local/share)/agentuse/project/<hash>/session, as 'agentuse sessions
list' orders them: newest first, damaged sessions last, subagents only
with --subagents (indented). The table shows created time, status, id,
agent and model. --json prints one object per session: id, dir, agentDir,
agentId, agentName, isSubAgent, model, status, trigger, created, updated
(ms), parentSessionID, errorCode, children (ids); a session whose
session.json cannot be read has only id, dir, agentDir and error.

Examples:
  sessctl list
  sessctl list --all --json | jq -r '.[].path'
  sessctl list --dir ./sessions
  sessctl list --store ~/backup/pi-sessions
  sessctl list --agentuse --project ~/src/app
`,
}

func init() { register(listCommand).run = runList }

func runList(e *env, args []string) int {
	fs := e.flags(listCommand)
	dir := fs.String("dir", "", "list the session directory `DIR`")
	cwd := fs.String("cwd", "", "list the sessions of working directory `DIR`")
	all := fs.Bool("all", false, "list the sessions of every working directory")
	store := fs.String("store", "pi", "the store to list: `pi`, indusagi, agentuse or a directory (listed recursively)")
	indusagi := fs.Bool("indusagi", false, "use indusagi's store instead of pi's (--store indusagi)")
	asJSON := fs.Bool("json", false, "print JSON")
	noIndex := fs.Bool("no-index", false, "read every session file instead of using the list index")
	au := addAgentUseFlags(fs, true)
	if code := e.parse(listCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		return e.usageError("unexpected argument %q", fs.Arg(0))
	}
	storeDir := ""
	switch *store {
	case "", "pi":
	case "indusagi":
		*indusagi = true
	case "agentuse":
		*au.on = true
	default:
		if *indusagi {
			return e.usageError("--indusagi cannot be combined with --store %s", *store)
		}
		storeDir = *store
	}
	if *au.on {
		if *dir != "" || *cwd != "" || *all || *indusagi || *noIndex || storeDir != "" {
			return e.usageError("--agentuse cannot be combined with --dir, --cwd, --all, --indusagi, --no-index or --store other than agentuse")
		}
		return runListAgentUse(e, au, *asJSON)
	}
	if *au.project != "" || *au.subagents {
		return e.usageError("--project and --subagents need --agentuse")
	}
	n := 0
	for _, set := range []bool{*dir != "", *cwd != "", *all, storeDir != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return e.usageError("--dir, --cwd, --all and --store DIR cannot be combined")
	}
	skipped := 0
	o := engine.ListOptions{NoIndex: *noIndex, Warn: func(err error) {
		skipped++
		fmt.Fprintf(e.stderr, "sessctl: list: skipped %v\n", err)
	}}
	if *indusagi {
		o.Agent = layout.AgentIndusagi
	}
	var infos []engine.SessionInfo
	var err error
	switch {
	case storeDir != "":
		if err := mustBeDir("session store", storeDir); err != nil {
			return e.fail(err)
		}
		infos, err = engine.ListTree(e.ctx, storeDir, o)
	case *all:
		infos, err = engine.ListAll(e.ctx, o)
	default:
		if *dir != "" {
			if err := mustBeDir("session directory", *dir); err != nil {
				return e.fail(err)
			}
		}
		o.Dir = *dir
		c := *cwd
		if c == "" {
			c, _ = os.Getwd()
		} else if abs, aerr := filepath.Abs(c); aerr == nil {
			c = abs
		}
		infos, err = engine.List(e.ctx, c, o)
	}
	if err != nil {
		return e.fail(err)
	}
	code := exitOK
	if skipped > 0 {
		code = exitFailure
	}
	if *asJSON {
		if err := writeBuffers(e.stdout, render.ListJSON(infos)); err != nil {
			return e.fail(err)
		}
		return code
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	if len(infos) == 0 {
		fmt.Fprintln(e.stderr, "no sessions")
		return code
	}
	render.List(w, infos)
	return code
}

// mustBeDir checks that a directory named on the command line exists (a
// missing one is not found, exit 5) and is a directory.
func mustBeDir(what, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %w", what, dir, engine.ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %w", what, dir, syscall.ENOTDIR)
	}
	return nil
}
