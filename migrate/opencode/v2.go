package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/sqlitedb"
)

// This file reads the sessions opencode's v2 session API writes (1.18 and
// later): one row per message in the table session_message (id,
// session_id, type, seq, time_created, time_updated, data), in seq order.
// data is the message without its id and type, which are columns:
//
//   - user {time, text, files?[{uri, mime, name?, description?}],
//     agents?[{name}]};
//   - synthetic {sessionID, text} and system {text}: text opencode adds;
//   - shell {callID, command, output}: a command the user ran;
//   - assistant {agent, model{id, providerID, variant?}, content[text
//     {id, text} | reasoning {id, text} | tool {id, name, state{status,
//     input, content[text {text} | file {uri, mime, name?}], structured,
//     error?{message}}}], finish?, cost?, tokens?, error?{message}};
//   - compaction {reason, summary, recent};
//   - model-switched {model} and agent-switched {agent}.

// v2Row is one session_message row.
type v2Row struct {
	id   string
	typ  string
	seq  int64
	data []byte
}

// v2Msg is a session_message row's data.
type v2Msg struct {
	Time struct {
		Created float64 `json:"created"`
	} `json:"time"`
	Text  string `json:"text"`
	Files []struct {
		URI  string `json:"uri"`
		Mime string `json:"mime"`
		Name string `json:"name"`
	} `json:"files"`
	CallID  string          `json:"callID"`
	Command string          `json:"command"`
	Output  json.RawMessage `json:"output"` // 1.18: a string; 2.0: {output, truncated}
	Status  string          `json:"status"` // shell (2.0): exited...; compaction (2.0): completed, failed
	Exit    *int            `json:"exit"`
	Agent   string          `json:"agent"`
	Model   *struct {
		ID         string `json:"id"`
		ProviderID string `json:"providerID"`
	} `json:"model"`
	Content []v2Content `json:"content"`
	Finish  string      `json:"finish"`
	Cost    float64     `json:"cost"`
	Tokens  *tokens     `json:"tokens"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Reason  string `json:"reason"`
	Summary string `json:"summary"`
	Recent  string `json:"recent"`
}

// v2Content is one block of a v2 assistant message.
type v2Content struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Text  string `json:"text"`
	Name  string `json:"name"`
	State *struct {
		Status     string          `json:"status"`
		Input      json.RawMessage `json:"input"`
		Content    []v2ToolContent `json:"content"`
		Structured json.RawMessage `json:"structured"`
		Error      *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"state"`
}

// v2ToolContent is one part of a v2 tool's output.
type v2ToolContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
	URI  string `json:"uri"`
	Mime string `json:"mime"`
	Name string `json:"name"`
}

// hasV2 reports whether db has the session_message table.
func hasV2(ctx context.Context, db *sqlitedb.DB) bool {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'session_message'`).Scan(&n)
	return err == nil && n > 0
}

// v2Messages returns the session_message rows of a session as messages,
// in seq order; a row whose data is not a JSON object is damage.
func (s *store) v2Messages(ctx context.Context, db *sqlitedb.DB, sessionID string, conv *migrate.Conversion) ([]*msg, error) {
	if !hasV2(ctx, db) {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT id, type, seq, data FROM session_message WHERE session_id = ? ORDER BY seq, id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read session messages of %s in %s: %w", sessionID, db.Path, err)
	}
	defer rows.Close()
	var out []*msg
	for rows.Next() {
		var r v2Row
		var data string
		if err := rows.Scan(&r.id, &r.typ, &r.seq, &data); err != nil {
			return nil, fmt.Errorf("read session messages of %s in %s: %w", sessionID, db.Path, err)
		}
		r.data = []byte(data)
		m := &msg{id: r.id, v2: &r}
		if err := migrate.DecodeJSON(r.data, &m.v2m); err != nil {
			conv.Damage = append(conv.Damage, &migrate.Damage{Path: db.Path, Pos: "session_message " + r.id, Err: err})
			continue
		}
		m.info.Time.Created = m.v2m.Time.Created
		out = append(out, m)
	}
	return out, rows.Err()
}

// mergeByTime merges two lists each in its own order into one ordered by
// creation time, the first list's message first on a tie.
func mergeByTime(a, b []*msg) []*msg {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]*msg, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].info.Time.Created < a[0].info.Time.Created {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// v2message converts one session_message row.
func (c *converter) v2message(m *msg) {
	v := &m.v2m
	t := time.UnixMilli(int64(v.Time.Created)).UTC()
	ms := migrate.Millis(t)
	switch m.v2.typ {
	case "user":
		blocks := [][]byte{migrate.TextBlock(v.Text)}
		for _, f := range v.Files {
			blocks = append(blocks, fileBlock(f.URI, f.Name))
		}
		c.tip = c.b.Message(m.id, c.tip, t, migrate.UserMessage(migrate.Array(blocks), ms))
	case "synthetic", "system":
		// Text opencode adds to the conversation: the model sees it (a
		// synthetic one as a user message, a system one as a system
		// message), the user never typed it.
		c.tip = c.b.CustomMessage(m.id, c.tip, t, "opencode-"+m.v2.typ, jsonl.AppendString(nil, v.Text), false, nil)
	case "shell":
		// opencode shows the model "Shell command: <command>\n<output>"
		// as a user message.
		out := shellOutput(v.Output)
		d := jsonl.NewObject(len(v.Command) + len(out) + 64)
		if v.CallID != "" {
			d.String("callID", v.CallID)
		}
		d.String("command", v.Command).String("output", out)
		if v.Exit != nil {
			d.Number("exit", float64(*v.Exit))
		}
		text := "Shell command: " + v.Command + "\n" + out
		c.tip = c.b.CustomMessage(m.id, c.tip, t, "opencode-shell", jsonl.AppendString(nil, text), true, d.Bytes())
	case "model-switched":
		if v.Model != nil {
			c.tip = c.b.ModelChange(m.id, c.tip, t, v.Model.ProviderID, v.Model.ID)
		}
	case "agent-switched":
		data := jsonl.NewObject(len(v.Agent)+16).String("agent", v.Agent).Bytes()
		c.tip = c.b.Custom(m.id, c.tip, t, "opencode-agent", data)
	case "compaction":
		if v.Status == "failed" || v.Status == "pending" || v.Status == "running" {
			// A compaction that did not complete summarises nothing: kept
			// out of the context, like a type this importer does not know.
			c.unknown(m, t)
			return
		}
		summary := v.Summary
		if strings.TrimSpace(v.Recent) != "" {
			summary += "\n\n" + v.Recent
		}
		var details []byte
		if v.Reason != "" {
			details = jsonl.NewObject(32).String("reason", v.Reason).Bytes()
		}
		c.tip = c.b.Compaction(m.id, c.tip, t, summary, c.lastTokens, details)
	case "assistant":
		c.v2assistant(m, t, ms)
	default:
		c.unknown(m, t)
	}
}

// unknown keeps a session_message row of a type this importer does not
// know (or a failed compaction) out of the context, with its data, so
// nothing is lost: a custom entry "opencode-message" {type, data}.
func (c *converter) unknown(m *msg, t time.Time) {
	data := jsonl.NewObject(len(m.v2.data)+64).String("type", m.v2.typ)
	if out, err := jsonl.Canonical(nil, m.v2.data); err == nil {
		data.Raw("data", out)
	}
	c.tip = c.b.Custom(m.id, c.tip, t, "opencode-message", data.Bytes())
}

// shellOutput returns a shell message's output: a string (1.18) or
// {"output","truncated"} (2.0).
func shellOutput(raw json.RawMessage) string {
	if s, ok := jsonl.String(raw); ok {
		return s
	}
	var o struct {
		Output    string `json:"output"`
		Truncated bool   `json:"truncated"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if o.Truncated {
			return o.Output + "\n(output truncated)"
		}
		return o.Output
	}
	return ""
}

// ForkType is the customType of the entry an opencode 2 fork starts with
// (the root of its tree): data {"forkedFrom", "parentHistory",
// "copiedMessages"?}. opencode copies the source session's messages into
// the fork (new ids, the same type and data); parentHistory "parent" says
// the first copiedMessages of them matched the source's, in seq order,
// and were left out (the source's import has them, and parentSession
// names it); "imported" that the source session is not in the store, so
// the copies are imported as the fork's own history.
const ForkType = "opencode-fork"

// forkPrefix leaves out the messages a fork copied from its source
// session, when that session is in the store: the leading rows whose type
// and data are those of the source's rows in order.
func (s *store) forkPrefix(ctx context.Context, c *converter, r *sessionRef, msgs []*msg) []*msg {
	note := jsonl.NewObject(96).String("forkedFrom", r.info.ForkOf)
	parent := s.sessions[r.info.ForkOf]
	var prows []*msg
	if parent != nil && parent.db != nil {
		var scratch migrate.Conversion
		if rows, err := s.v2Messages(ctx, parent.db, parent.info.ID, &scratch); err == nil {
			prows = rows
		}
	}
	out := msgs
	if parent == nil || len(prows) == 0 {
		note.String("parentHistory", "imported")
	} else {
		n := 0
		for n < len(msgs) && n < len(prows) && sameRow(msgs[n], prows[n]) {
			n++
		}
		note.String("parentHistory", "parent").Number("copiedMessages", float64(n))
		out = msgs[n:]
		c.dropped = n
	}
	t := time.UnixMilli(int64(r.info.Time.Created)).UTC()
	c.tip = c.b.Custom("\x00fork", nil, t, ForkType, note.Bytes())
	c.forkEntries = c.b.Len()
	return out
}

// sameRow reports whether a fork's session_message row is a copy of its
// source's: the same type and the same data.
func sameRow(a, b *msg) bool {
	if a.v2 == nil || b.v2 == nil || a.v2.typ != b.v2.typ {
		return false
	}
	ca, err1 := jsonl.Canonical(nil, a.v2.data)
	cb, err2 := jsonl.Canonical(nil, b.v2.data)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

func (c *converter) v2assistant(m *msg, t time.Time, ms int64) {
	v := &m.v2m
	provider, model := "", ""
	if v.Model != nil {
		provider, model = v.Model.ProviderID, v.Model.ID
	}
	a := migrate.Assistant{API: api(provider), Provider: provider, Model: model, Timestamp: ms}
	var tools []*v2Content
	for i := range v.Content {
		p := &v.Content[i]
		switch p.Type {
		case "text":
			a.Content = append(a.Content, migrate.TextBlock(p.Text))
		case "reasoning":
			a.Content = append(a.Content, migrate.ThinkingBlock(p.Text, "", false))
		case "tool":
			var input json.RawMessage
			if p.State != nil {
				input = p.State.Input
			}
			a.Content = append(a.Content, migrate.ToolCallBlock(p.ID, p.Name, migrate.ObjectArgs(input)))
			tools = append(tools, p)
		}
	}
	if tk := v.Tokens; tk != nil {
		a.Usage = message.Usage{Input: migrate.Tokens(tk.Input), Output: migrate.Tokens(tk.Output + tk.Reasoning), CacheRead: migrate.Tokens(tk.Cache.Read), CacheWrite: migrate.Tokens(tk.Cache.Write), Cost: message.Cost{Total: v.Cost}}
		c.lastTokens = tk.Input + tk.Cache.Read + tk.Output + tk.Reasoning
	}
	switch v.Finish {
	case "length":
		a.StopReason = "length"
	case "stop":
		if len(tools) == 0 {
			a.StopReason = "stop"
		}
	}
	if v.Error != nil || v.Finish == "error" {
		a.StopReason = "error"
		if v.Error != nil {
			a.ErrorMessage = v.Error.Message
		}
		if a.ErrorMessage == "" {
			a.ErrorMessage = "error"
		}
	}
	c.tip = c.b.Message(m.id, c.tip, t, a.JSON())
	for _, p := range tools {
		content, isErr := migrate.TextContent("(the tool did not finish)"), true
		if st := p.State; st != nil {
			switch st.Status {
			case "completed":
				content, isErr = v2ToolOutput(st.Content, st.Structured, ""), false
			case "error":
				msg := ""
				if st.Error != nil {
					msg = st.Error.Message
				}
				content = v2ToolOutput(st.Content, st.Structured, msg)
			}
		}
		res := migrate.ToolResultMessage(p.ID, p.Name, content, nil, isErr, ms)
		c.tip = c.b.Message(m.id+"/"+p.ID, c.tip, t, res)
	}
}

// v2ToolOutput returns a v2 tool's output as toolResult content: its text
// parts joined as one text block (the error message first), its image
// parts as images, other files named; the structured result as JSON when
// there is nothing else.
func v2ToolOutput(parts []v2ToolContent, structured json.RawMessage, errMsg string) []byte {
	var texts []string
	if errMsg != "" {
		texts = append(texts, errMsg)
	}
	var images [][]byte
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "file":
			if data, mime, ok := dataURL(p.URI); ok && strings.HasPrefix(mime, "image/") {
				images = append(images, migrate.ImageBlock(data, mime))
			} else {
				texts = append(texts, fileText(p.URI, p.Name))
			}
		}
	}
	if len(texts) == 0 && len(images) == 0 {
		if s := strings.TrimSpace(string(structured)); s != "" && s != "{}" && s != "null" {
			texts = append(texts, migrate.JSONText(structured))
		}
	}
	blocks := [][]byte{migrate.TextBlock(strings.Join(texts, "\n"))}
	return migrate.Array(append(blocks, images...))
}

// fileBlock returns a file attachment as a content block: an image given
// as a data URL as an image, anything else as a text naming it.
func fileBlock(uri, name string) []byte {
	if data, mime, ok := dataURL(uri); ok && strings.HasPrefix(mime, "image/") {
		return migrate.ImageBlock(data, mime)
	}
	return migrate.TextBlock(fileText(uri, name))
}

// fileText names a file the session refers to: "[file: name]".
func fileText(uri, name string) string {
	if name == "" {
		name = uri
		if strings.HasPrefix(name, "data:") {
			name = "data (" + strconv.Itoa(len(uri)) + " bytes)"
		}
	}
	return "[file: " + name + "]"
}
