package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
)

var listCommand = &command{
	name:    "list",
	summary: "list sessions, newest first",
	usage: `
Usage: sessctl list [--dir DIR | --cwd DIR | --all] [--indusagi] [--json] [--no-index]
       sessctl list --agentuse [--project DIR] [--subagents] [--json]

Lists the sessions of the current directory's project (pi's list()), or of
another working directory (--cwd), of an explicit session directory
(--dir), or of every project (--all, pi's listAll()). Sessions are sorted
by their last user or assistant message, newest first.

The human table shows the modification time, the number of messages, the
session id and the name or first message. --json prints pi's SessionInfo
objects: path, id, cwd, name, parentSessionPath, created, modified,
messageCount, firstMessage, allMessagesText.

Listing keeps a cache of each directory's session summaries in a file named
.sessctl-list-index beside the sessions, used only for files whose size
and modification time are unchanged; it is safe to delete. --no-index
reads every file.

The store is pi's (PI_CODING_AGENT_DIR, default ~/.pi/agent); --indusagi
uses indusagi's (INDUSAGI_AGENT_DIR, INDUSAGI_CODING_AGENT_DIR, INDUSAGI_DIR,
default ~/.indusagi/agent).

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
  sessctl list --agentuse --project ~/src/app
`,
}

func init() { register(listCommand).run = runList }

func runList(e *env, args []string) int {
	fs := e.flags(listCommand)
	dir := fs.String("dir", "", "list the session directory `DIR`")
	cwd := fs.String("cwd", "", "list the sessions of working directory `DIR`")
	all := fs.Bool("all", false, "list the sessions of every working directory")
	indusagi := fs.Bool("indusagi", false, "use indusagi's store instead of pi's")
	asJSON := fs.Bool("json", false, "print JSON")
	noIndex := fs.Bool("no-index", false, "read every session file instead of using the list index")
	au := addAgentUseFlags(fs, true)
	if code := e.parse(listCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		return e.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *au.on {
		if *dir != "" || *cwd != "" || *all || *indusagi || *noIndex {
			return e.usageError("--agentuse cannot be combined with --dir, --cwd, --all, --indusagi or --no-index")
		}
		return runListAgentUse(e, au, *asJSON)
	}
	if *au.project != "" || *au.subagents {
		return e.usageError("--project and --subagents need --agentuse")
	}
	n := 0
	for _, set := range []bool{*dir != "", *cwd != "", *all} {
		if set {
			n++
		}
	}
	if n > 1 {
		return e.usageError("--dir, --cwd and --all cannot be combined")
	}
	o := engine.ListOptions{NoIndex: *noIndex}
	if *indusagi {
		o.Agent = layout.AgentIndusagi
	}
	var infos []engine.SessionInfo
	var err error
	switch {
	case *all:
		infos, err = engine.ListAll(e.ctx, o)
	default:
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
	if *asJSON {
		if err := writeBuffers(e.stdout, infosJSON(infos)); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	if len(infos) == 0 {
		fmt.Fprintln(e.stderr, "no sessions")
		return exitOK
	}
	fmt.Fprintf(w, "%-16s  %5s  %-8s  %s\n", "MODIFIED", "MSGS", "ID", "NAME / FIRST MESSAGE")
	for i := range infos {
		in := &infos[i]
		title := in.FirstMessage
		if in.HasName && in.Name != "" {
			title = in.Name
		}
		fmt.Fprintf(w, "%-16s  %5d  %-8s  %s\n", in.Modified.Local().Format("2006-01-02 15:04"),
			in.MessageCount, shortID(in.IDString()), oneLine(title, 60))
	}
	return exitOK
}

// infosJSON returns infos as a JSON array, one element per line, as the
// pieces to write: the large part of each element is the info's own
// memory, not a copy.
func infosJSON(infos []engine.SessionInfo) [][]byte {
	// Heads go into one buffer, whose growth would move them, so they are
	// recorded as bounds and sliced once it is complete.
	var heads []byte
	bounds := make([][2]int, len(infos))
	rests := make([][]byte, len(infos))
	for i := range infos {
		start := len(heads)
		if i > 0 {
			heads = append(heads, ',')
		} else {
			heads = append(heads, '[')
		}
		heads = append(heads, "\n  "...)
		heads, rests[i] = engine.AppendInfoJSON(heads, &infos[i])
		bounds[i] = [2]int{start, len(heads)}
	}
	out := make([][]byte, 0, 2*len(infos)+1)
	for i := range infos {
		out = append(out, heads[bounds[i][0]:bounds[i][1]], rests[i])
	}
	if len(infos) == 0 {
		return append(out, []byte("[]\n"))
	}
	return append(out, []byte("\n]\n"))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// oneLine folds whitespace and cuts s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
