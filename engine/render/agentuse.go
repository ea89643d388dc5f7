package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// AgentUseIDs returns the ids of xs as a JSON array.
func AgentUseIDs(xs []*agentuse.Info) []byte {
	out := []byte{'['}
	for i, c := range xs {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonl.AppendString(out, c.ID)
	}
	return append(out, ']')
}

// AgentUseJSON writes everything stored for one AgentUse session (what
// 'sessctl dump --store agentuse' prints) as a 2-space indented JSON
// object and a newline:
//
//	{"format": "agentuse", "id", "dir", "parentSessionID", "children": [ids],
//	 "session": <session.json>, "tools": <tools.json>|null,
//	 "context": <context.json>|null,
//	 "messages": [{"id", "message": <message.json>|null,
//	               "parts": [<part files in AgentUse's order>]}],
//	 "files": [relative paths], "problems": [{"path", "error"}],
//	 "skipped": [{"path", "error"}]}
//
// Stored files appear as parsed JSON values (null when unreadable), in
// AgentUse's message and part order.
func AgentUseJSON(w io.Writer, c *agentuse.Contents) error {
	x := c.Info
	b := jsonl.NewObject(1<<16).String("format", "agentuse").String("id", x.ID).String("dir", x.Dir)
	if x.ParentID != "" {
		b.String("parentSessionID", x.ParentID)
	} else {
		b.Null("parentSessionID")
	}
	b.Raw("children", AgentUseIDs(x.Children))
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
	skipped := []byte{'['}
	for i, err := range c.Skipped {
		if i > 0 {
			skipped = append(skipped, ',')
		}
		path := ""
		var pe *fs.PathError
		if errors.As(err, &pe) {
			path = pe.Path
		}
		skipped = append(skipped, jsonl.NewObject(256).String("path", path).String("error", err.Error()).Bytes()...)
	}
	b.Raw("skipped", append(skipped, ']'))
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

// AgentUseTranscript writes an AgentUse session as a readable transcript
// for a terminal (times UTC), what 'sessctl show' prints for one:
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
func AgentUseTranscript(w io.Writer, c *agentuse.Contents, full bool) error {
	bw := bufio.NewWriter(w)
	x := c.Info
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
			fmt.Fprintf(bw, "[%s] message (damaged message.json)\n", shortULID(m.ID))
		} else {
			t := m.Tokens
			fmt.Fprintf(bw, "[%s] message  %s  %d tokens (in %d, out %d", shortULID(m.ID), auTime(m.Created), t.Input+t.Output, t.Input, t.Output)
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

// writeAgentUsePart writes one part of a message.
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

// shortULID is the first 12 characters of an AgentUse id.
func shortULID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
