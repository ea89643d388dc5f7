package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"github.com/sessctl/sessctl/internal/human"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/jsonl"
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

// agentUseStore opens the AgentUse store of a project directory ("" means
// the working directory).
func agentUseStore(e *env, project string) (*agentuse.Store, error) {
	return agentuse.OpenStore(e.ctx, agentuse.Options{StateRoot: project})
}

// isAgentUseSessionDir reports whether arg names an AgentUse session
// directory (one holding a session.json file).
func isAgentUseSessionDir(arg string) bool {
	fi, err := os.Stat(filepath.Join(arg, layout.AgentUseSessionFile))
	return err == nil && fi.Mode().IsRegular()
}

// useAgentUse reports whether a dump or show argument names an AgentUse
// session: --store agentuse, or the path of a session directory.
func useAgentUse(store, arg string) bool {
	return store == "agentuse" || isAgentUseSessionDir(arg)
}

// findAgentUse resolves an AgentUse session argument: a session directory,
// or a full id or unique id prefix in the project's store.
func findAgentUse(e *env, project, arg string) (*agentuse.Store, *agentuse.Session, error) {
	if isAgentUseSessionDir(arg) {
		dir, err := filepath.Abs(arg)
		if err != nil {
			return nil, nil, err
		}
		st, err := agentuse.OpenStore(e.ctx, agentuse.Options{SessionRoot: filepath.Dir(dir)})
		if err != nil {
			return nil, nil, err
		}
		all, err := st.Sessions(e.ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, x := range all {
			if x.Dir == dir {
				return st, x, nil
			}
		}
		return nil, nil, fmt.Errorf("AgentUse session %s: %w", arg, engine.ErrNotFound)
	}
	st, err := agentUseStore(e, project)
	if err != nil {
		return nil, nil, err
	}
	x, err := st.Find(e.ctx, arg)
	var amb *agentuse.AmbiguousError
	if errors.As(err, &amb) {
		ae := &engine.AmbiguousError{Name: arg}
		for _, c := range amb.Candidates {
			ae.Candidates = append(ae.Candidates, engine.Candidate{ID: c.ID, Path: c.Dir})
		}
		return nil, nil, ae
	}
	if err != nil {
		return nil, nil, err
	}
	return st, x, nil
}

// runListAgentUse is `sessctl list --agentuse`: the project's sessions in
// AgentUse's order (newest first, unreadable last), top-level only unless
// --subagents.
func runListAgentUse(e *env, f *agentUseFlags, asJSON bool) int {
	st, err := agentUseStore(e, *f.project)
	if err != nil {
		return e.fail(err)
	}
	list, err := st.List(e.ctx, agentuse.ListOptions{Subagents: *f.subagents})
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	if asJSON {
		w.WriteString("[")
		for i, x := range list {
			if i > 0 {
				w.WriteString(",")
			}
			w.WriteString("\n  ")
			w.Write(agentUseInfoJSON(x))
		}
		if len(list) > 0 {
			w.WriteString("\n")
		}
		w.WriteString("]\n")
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "no AgentUse sessions in %s\n", st.Root())
		return exitOK
	}
	fmt.Fprintf(w, "%-16s  %-9s  %-12s  %-24s  %s\n", "CREATED", "STATUS", "ID", "AGENT", "MODEL")
	for _, x := range list {
		created, status, agent := "unknown", x.Status, x.AgentName
		if x.Err == nil && x.Created > 0 {
			created = time.UnixMilli(x.Created).Local().Format("2006-01-02 15:04")
		}
		if x.Err != nil {
			status, agent = "damaged", x.AgentDir
		} else if status == "" {
			status = "unknown"
		}
		if agent == "" {
			agent = x.AgentID
		}
		agent = human.OneLine(agent, 24)
		if x.Nested {
			agent = "  " + human.OneLine(agent, 22)
		}
		fmt.Fprintf(w, "%-16s  %-9s  %-12s  %-24s  %s\n", created, status, shortAgentUseID(x.ID), agent, x.Model)
	}
	return exitOK
}

func shortAgentUseID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// agentUseInfoJSON is one session of `list --agentuse --json`.
func agentUseInfoJSON(x *agentuse.Session) []byte {
	b := jsonl.NewObject(512).String("id", x.ID).String("dir", x.Dir).String("agentDir", x.AgentDir)
	if x.Err != nil {
		return b.String("error", x.Err.Error()).Bytes()
	}
	b.String("agentId", x.AgentID).String("agentName", x.AgentName).Bool("isSubAgent", x.IsSubAgent).
		String("model", x.Model).String("status", x.Status).String("trigger", x.Trigger).
		Number("created", float64(x.Created)).Number("updated", float64(x.Updated))
	if x.ParentID != "" {
		b.String("parentSessionID", x.ParentID)
	} else {
		b.Null("parentSessionID")
	}
	if x.ErrorCode != "" {
		b.String("errorCode", x.ErrorCode)
	} else {
		b.Null("errorCode")
	}
	return b.Raw("children", auIDs(x.Children)).Bytes()
}

func auIDs(xs []*agentuse.Session) []byte {
	out := []byte{'['}
	for i, c := range xs {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonl.AppendString(out, c.ID)
	}
	return append(out, ']')
}

// runDumpAgentUse is `sessctl dump --store agentuse SESSION`: everything
// stored for one session as one JSON object (see writeAgentUseJSON).
// Damaged files are listed under "problems" and reported on stderr; the
// exit code is then 4.
func runDumpAgentUse(e *env, f *agentUseFlags, arg string) int {
	_, c, code := readAgentUse(e, *f.project, arg)
	if c == nil {
		return code
	}
	if err := writeAgentUseJSON(e.stdout, c); err != nil {
		return e.fail(err)
	}
	return reportAgentUseProblems(e, c)
}

// runShowAgentUse prints an AgentUse session as a transcript (see
// writeAgentUseTranscript), or with asJSON as writeAgentUseJSON does. It
// is what `sessctl show` calls for an AgentUse session.
func runShowAgentUse(e *env, project, arg string, full, asJSON bool) int {
	_, c, code := readAgentUse(e, project, arg)
	if c == nil {
		return code
	}
	var err error
	if asJSON {
		err = writeAgentUseJSON(e.stdout, c)
	} else {
		err = writeAgentUseTranscript(e.stdout, c, full)
	}
	if err != nil {
		return e.fail(err)
	}
	return reportAgentUseProblems(e, c)
}

// readAgentUse finds and reads a session; on failure it reports the error
// and returns a nil session and the exit code.
func readAgentUse(e *env, project, arg string) (*agentuse.Store, *agentuse.Contents, int) {
	st, x, err := findAgentUse(e, project, arg)
	if err != nil {
		return nil, nil, e.fail(err)
	}
	c, err := st.Read(e.ctx, x)
	if err != nil {
		return nil, nil, e.fail(err)
	}
	return st, c, exitOK
}

// reportAgentUseProblems writes one line per damaged file to stderr and
// returns exit code 4 when there was any.
func reportAgentUseProblems(e *env, c *agentuse.Contents) int {
	for _, p := range c.Problems {
		fmt.Fprintf(e.stderr, "sessctl: %s: damaged file skipped: %v\n", e.name, p)
	}
	if len(c.Problems) > 0 {
		return exitCorrupt
	}
	return exitOK
}

// writeAgentUseJSON writes one session as a 2-space indented JSON object
// and a newline:
//
//	{"format": "agentuse", "id", "dir", "parentSessionID", "children": [ids],
//	 "session": <session.json>, "tools": <tools.json>|null,
//	 "context": <context.json>|null,
//	 "messages": [{"id", "message": <message.json>|null,
//	               "parts": [<part files in AgentUse's order>]}],
//	 "files": [relative paths], "problems": [{"path", "error"}]}
//
// Stored files appear as parsed JSON values (null when unreadable), in
// AgentUse's message and part order.
func writeAgentUseJSON(w io.Writer, c *agentuse.Contents) error {
	x := c.Session
	b := jsonl.NewObject(1<<16).String("format", "agentuse").String("id", x.ID).String("dir", x.Dir)
	if x.ParentID != "" {
		b.String("parentSessionID", x.ParentID)
	} else {
		b.Null("parentSessionID")
	}
	b.Raw("children", auIDs(x.Children))
	b.Raw("session", auRawOrNull(x.Raw, x.Err == nil))
	b.Raw("tools", auRawOrNull(c.Tools, c.Tools != nil))
	b.Raw("context", auRawOrNull(c.Context, c.Context != nil))
	msgs := []byte{'['}
	for i, m := range c.Messages {
		if i > 0 {
			msgs = append(msgs, ',')
		}
		parts := []byte{'['}
		for j, p := range m.Parts {
			if j > 0 {
				parts = append(parts, ',')
			}
			parts = append(parts, auRawOrNull(p.Raw, true)...)
		}
		parts = append(parts, ']')
		msgs = append(msgs, jsonl.NewObject(len(m.Raw)+len(parts)+64).String("id", m.ID).
			Raw("message", auRawOrNull(m.Raw, m.Err == nil)).Raw("parts", parts).Bytes()...)
	}
	b.Raw("messages", append(msgs, ']'))
	files := []byte{'['}
	for i, f := range c.Files {
		if i > 0 {
			files = append(files, ',')
		}
		files = jsonl.AppendString(files, f)
	}
	b.Raw("files", append(files, ']'))
	probs := []byte{'['}
	for i, p := range c.Problems {
		if i > 0 {
			probs = append(probs, ',')
		}
		probs = append(probs, jsonl.NewObject(256).String("path", p.Path).String("error", p.Err.Error()).Bytes()...)
	}
	b.Raw("problems", append(probs, ']'))
	out, err := jsonl.Indent(nil, b.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// rawOrNull returns the canonical form of a stored JSON file, or null.
func auRawOrNull(raw []byte, ok bool) []byte {
	if !ok {
		return []byte("null")
	}
	c, err := jsonl.Canonical(nil, raw)
	if err != nil {
		return []byte("null")
	}
	return c
}

// writeAgentUseTranscript writes an AgentUse session as a readable
// transcript (times UTC):
//
//	session 01M7ZXJ093A1K5TPE8N7MS01CN  agents/manager (manager)  completed
//	  model anthropic:claude-sonnet-4-5  trigger manual  created 2026-11-21 20:42:54
//	  children: 01M7ZXJ0B9NH7FQE1AXR815054
//	[01M7ZXJ097NY] message  2026-11-21 20:42:54  5540 tokens (in 5200, out 340, cache read 4000)
//	  task: Coordinate a short research report.
//	  user: focus on ULIDs
//	  thinking: the first line... (+2 lines)
//	  the assistant's text
//	  -> tools__bash {"command":"ls docs"}  completed
//	     README.md
//	  log info: message
//	  error (agent) EXECUTION_ERROR: Bad Request
//
// Parts are in AgentUse's order. Long texts and outputs are cut to a few
// lines unless full is set.
func writeAgentUseTranscript(w io.Writer, c *agentuse.Contents, full bool) error {
	bw := bufio.NewWriter(w)
	x := c.Session
	status := x.Status
	if x.Err != nil {
		status = "damaged session.json"
	} else if status == "" {
		status = "unknown"
	}
	fmt.Fprintf(bw, "session %s  %s", x.ID, x.AgentID)
	if x.AgentName != "" && x.AgentName != x.AgentID {
		fmt.Fprintf(bw, " (%s)", x.AgentName)
	}
	fmt.Fprintf(bw, "  %s\n", status)
	fmt.Fprintf(bw, "  model %s  trigger %s  created %s  updated %s\n", x.Model, x.Trigger, auTime(x.Created), auTime(x.Updated))
	if x.ParentID != "" {
		fmt.Fprintf(bw, "  parent: %s\n", x.ParentID)
	}
	if x.ErrorCode != "" {
		fmt.Fprintf(bw, "  error: %s %s\n", x.ErrorCode, auErrorMessage(x.Raw))
	}
	if len(x.Children) > 0 {
		ids := make([]string, len(x.Children))
		for i, ch := range x.Children {
			ids[i] = ch.ID
		}
		fmt.Fprintf(bw, "  children: %s\n", strings.Join(ids, " "))
	}
	lines := 6
	if full {
		lines = -1
	}
	for _, m := range c.Messages {
		if m.Err != nil {
			fmt.Fprintf(bw, "[%s] message (damaged message.json)\n", shortAgentUseID(m.ID))
		} else {
			t := m.Tokens
			fmt.Fprintf(bw, "[%s] message  %s  %d tokens (in %d, out %d", shortAgentUseID(m.ID), auTime(m.Created), t.Input+t.Output, t.Input, t.Output)
			if t.Reasoning > 0 {
				fmt.Fprintf(bw, ", reasoning %d", t.Reasoning)
			}
			if t.CacheRead > 0 || t.CacheWrite > 0 {
				fmt.Fprintf(bw, ", cache read %d, write %d", t.CacheRead, t.CacheWrite)
			}
			bw.WriteString(")")
			if !m.HasCompleted {
				bw.WriteString("  not completed")
			}
			bw.WriteString("\n")
			prompt := auPath(m.Raw, "user", "prompt")
			auBlock(bw, "  task: ", auStr(auPath(prompt, "task")), lines)
			if u := auStr(auPath(prompt, "user")); u != "" {
				auBlock(bw, "  user: ", u, lines)
			}
		}
		for _, p := range m.Parts {
			writeAgentUsePart(bw, p, lines)
		}
	}
	return bw.Flush()
}

func writeAgentUsePart(w *bufio.Writer, p *agentuse.PartInfo, lines int) {
	raw := p.Raw
	switch p.Type {
	case "text":
		prefix := "  "
		if p.Role == "user" {
			prefix = "  user: "
		}
		auBlock(w, prefix, auStr(auPath(raw, "text")), lines)
	case "reasoning":
		auBlock(w, "  thinking: ", auStr(auPath(raw, "text")), min(lines, 1))
	case "tool":
		st := auPath(raw, "state")
		fmt.Fprintf(w, "  -> %s %s  %s\n", p.Tool, human.OneLine(auCompact(auPath(st, "input")), 100), p.Status)
		switch p.Status {
		case "completed":
			out := auPath(st, "output")
			if inner := auPath(out, "output"); jsonl.KindOf(inner) == jsonl.KindString {
				out = inner // bash and subagent results: {output, metadata}
			}
			text := auStr(out)
			if jsonl.KindOf(out) != jsonl.KindString {
				text = auCompact(out)
			}
			auBlock(w, "     ", text, lines)
		case "error":
			auBlock(w, "     error: ", auStr(auPath(st, "error")), lines)
		}
	case "log":
		fmt.Fprintf(w, "  log %s: %s\n", auStr(auPath(raw, "level")), human.OneLine(auStr(auPath(raw, "message")), 200))
	case "error":
		fmt.Fprintf(w, "  error (%s) %s: %s\n", auStr(auPath(raw, "source")), auStr(auPath(raw, "code")), human.OneLine(auStr(auPath(raw, "message")), 200))
	case "compaction":
		fmt.Fprintf(w, "  == compaction (%s): %s -> %s tokens\n", auStr(auPath(raw, "reason")),
			auCompact(auPath(raw, "tokensBefore")), auCompact(auPath(raw, "tokensAfter")))
	case "learning":
		fmt.Fprintf(w, "  == learning %s (%s): %s\n", auStr(auPath(raw, "status")), auStr(auPath(raw, "source")), auCompact(auPath(raw, "count")))
	default:
		fmt.Fprintf(w, "  [%s] %s\n", p.Type, human.OneLine(auCompact(raw), 100))
	}
}

// writeBlock writes text under prefix, cut to n lines (n < 0: all).
func auBlock(w *bufio.Writer, prefix, text string, n int) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	ls := strings.Split(text, "\n")
	pad := strings.Repeat(" ", len(prefix))
	for i, l := range ls {
		if n >= 0 && i == n {
			fmt.Fprintf(w, "%s... %d more lines\n", pad, len(ls)-n)
			break
		}
		if i == 0 {
			w.WriteString(prefix)
		} else {
			w.WriteString(pad)
		}
		w.WriteString(l)
		w.WriteString("\n")
	}
}

func auTime(ms int64) string {
	if ms <= 0 {
		return "unknown"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
}

// jsonPath returns the raw value at a path of object keys, or nil.
func auPath(raw []byte, keys ...string) []byte {
	v := raw
	for _, k := range keys {
		if jsonl.KindOf(v[jsonl.SkipWS(v, 0):]) != jsonl.KindObject {
			return nil
		}
		var ok bool
		if v, ok = jsonl.Lookup(v, k); !ok {
			return nil
		}
	}
	return v
}

func auStr(v []byte) string {
	s, _ := jsonl.String(v)
	return s
}

func auCompact(v []byte) string {
	if v == nil {
		return ""
	}
	c, err := jsonl.Canonical(nil, v)
	if err != nil {
		return ""
	}
	return string(c)
}

func auErrorMessage(session []byte) string {
	return human.OneLine(auStr(auPath(session, "error", "message")), 200)
}
