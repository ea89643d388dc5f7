package main

import (
	"bufio"
	"flag"
	"fmt"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
)

// AgentUse stores: `sessctl list --agentuse`, and dump (and show) of an
// AgentUse session named with --store agentuse by ULID or unique prefix,
// or by its directory.
//
// The store is the project's session directory as AgentUse computes it:
// $XDG_DATA_HOME (default ~/.local/share)/agentuse/project/<hash>/session,
// where <hash> comes from the git top level of the project (--project DIR,
// default the working directory), or from its absolute path outside git.

// agentUseFlags are the flags AgentUse commands share.
type agentUseFlags struct {
	on        *bool   // --agentuse (list)
	project   *string // --project DIR
	subagents *bool   // --subagents (list)
}

// addAgentUseFlags adds --project to fs, and for list also --agentuse and
// --subagents.
func addAgentUseFlags(fs *flag.FlagSet, list bool) *agentUseFlags {
	f := &agentUseFlags{}
	if list {
		f.on = fs.Bool("agentuse", false, "list AgentUse sessions of a project instead of pi's")
		f.subagents = fs.Bool("subagents", false, "with --agentuse: list subagent sessions too")
	}
	f.project = fs.String("project", "", "AgentUse project `DIR` whose sessions to use (default: the working directory)")
	return f
}

// isAgentUseDir reports whether path names an AgentUse session
// directory (agentuse.IsSessionDir).
func isAgentUseDir(path string) bool { return agentuse.IsSessionDir(nil, path) }

// useAgentUse reports whether a dump or show argument names an AgentUse
// session: --store agentuse, or the path of a session directory.
func useAgentUse(store, arg string) bool {
	if isAgentUseDir(arg) {
		return true
	}
	ps, err := layout.ResolvePlaces(store)
	return err == nil && len(ps) == 1 && ps[0].Format == layout.FormatAgentUse
}

// runListAgentUse is `sessctl list --agentuse`: the project's sessions in
// AgentUse's order (newest first, unreadable last), top-level only unless
// --subagents.
func runListAgentUse(e *env, f *agentUseFlags, asJSON bool) int {
	st, err := agentuse.OpenStore(e.ctx, agentuse.StoreOptions{StateRoot: *f.project}) // "": the working directory's project
	if err != nil {
		return e.fail(err)
	}
	defer st.Close()
	code := exitOK
	list, err := st.List(e.ctx, agentuse.ListOptions{Subagents: *f.subagents, Warn: func(err error) {
		fmt.Fprintf(e.stderr, "sessctl: list: skipped %v\n", err)
		code = exitFailure // the list may miss sessions
	}})
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	if asJSON {
		render.AgentUseListJSON(w, list)
		return code
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "no AgentUse sessions in %s\n", human.QuotePath(st.Dir()))
		return code
	}
	render.AgentUseList(w, list)
	return code
}

// runShowAgentUse prints an AgentUse session as a transcript (see
// render.AgentUseTranscript), or with asJSON everything stored for it as
// one JSON object (render.AgentUseJSON): what `sessctl show` and `sessctl
// dump` (asJSON) print for an AgentUse session. Damaged files are
// listed under "problems" and reported on stderr; the exit code is then 4.
func runShowAgentUse(e *env, project, arg string, full, asJSON bool) int {
	c, err := agentuse.FindRead(e.ctx, agentuse.StoreOptions{StateRoot: project}, arg)
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		err = render.AgentUseJSON(e.stdout, c)
	} else {
		err = render.AgentUseTranscript(e.stdout, c, full)
	}
	if err != nil {
		return e.fail(err)
	}
	return reportAgentUseProblems(e, c)
}

// reportAgentUseProblems writes one line per damaged file and per file or
// directory that was not read to stderr, and returns exit code 4 when a
// file was damaged, else 1 when something was not read.
func reportAgentUseProblems(e *env, c *agentuse.Contents) int {
	for _, p := range c.Problems {
		fmt.Fprintf(e.stderr, "sessctl: %s: damaged file skipped: %v\n", e.name, p)
	}
	for _, err := range c.Skipped {
		fmt.Fprintf(e.stderr, "sessctl: %s: skipped %v\n", e.name, err)
	}
	switch {
	case len(c.Problems) > 0:
		return exitCorrupt
	case len(c.Skipped) > 0:
		return exitFailure
	}
	return exitOK
}
