package search

import (
	"bytes"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Kind says what a piece of indexed text is.
type Kind uint8

// The kinds of indexed text.
const (
	KindUser          Kind = iota + 1 // a user prompt
	KindText                          // assistant text
	KindThinking                      // assistant thinking
	KindToolCall                      // a tool call: the tool's name and arguments
	KindToolResult                    // a tool result
	KindBash                          // a user's !command and its output (pi's bashExecution)
	KindCustom                        // a custom message (custom_message entries, custom-role messages)
	KindCompaction                    // a compaction summary
	KindBranchSummary                 // a branch summary
	KindLabel                         // a label
	KindName                          // a session name (session_info; an AgentUse agent's name)
	KindTask                          // an AgentUse agent's task (the agent file's body)
	KindError                         // an AgentUse error part
	KindTool                          // an AgentUse tool part: name, input and output
	KindSystem                        // a system message (pi 1.x)
	KindContextEdit                   // a context edit's replacement content (pi 1.x)

	kindLast = KindContextEdit
)

var kindNames = [...]string{"", "user", "text", "thinking", "toolCall", "toolResult", "bash", "custom",
	"compaction", "branchSummary", "label", "name", "task", "error", "tool",
	"system", "contextEdit"}

// String returns the kind's name as --json prints it ("toolCall").
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Role returns the role a kind of text belongs to: "user", "assistant",
// "tool", "system" or "other" (custom messages, summaries, labels, names,
// tasks, errors, context edits' replacements).
func (k Kind) Role() string {
	switch k {
	case KindUser:
		return RoleUser
	case KindText, KindThinking:
		return RoleAssistant
	case KindToolCall, KindToolResult, KindBash, KindTool:
		return RoleTool
	case KindSystem:
		return RoleSystem
	}
	return RoleOther
}

// The roles Query.Role selects.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
	RoleOther     = "other"
)

// doc is one piece of indexed text of a line or file: its kind, the tool
// it belongs to (tool calls and results) and the text.
type doc struct {
	kind Kind
	tool string
	text string
}

// lineDocs returns the texts of one session entry, in a fixed order: the
// index stores a text's position in this list, and snippets extract the
// line again and take the text at that position.
func lineDocs(e *jsonl.Entry, dst []doc) []doc {
	add := func(k Kind, tool, text string) {
		if strings.TrimSpace(text) != "" {
			dst = append(dst, doc{kind: k, tool: tool, text: text})
		}
	}
	str := func(obj []byte, key string) string {
		v, _ := lookup(obj, key)
		s, _ := jsonl.String(v)
		return s
	}
	switch e.Type {
	case jsonl.TypeMessage:
		msg := e.Message()
		if msg == nil {
			return dst
		}
		content, _ := lookup(msg, "content")
		switch e.Role {
		case "user":
			add(KindUser, "", contentText(content))
		case "assistant":
			var text, thinking strings.Builder
			_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
				if jsonl.KindOf(b) != jsonl.KindObject {
					return true
				}
				switch str(b, "type") {
				case "text":
					joinTo(&text, str(b, "text"))
				case "thinking":
					joinTo(&thinking, str(b, "thinking"))
				}
				return true
			})
			add(KindText, "", text.String())
			add(KindThinking, "", thinking.String())
			_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
				if jsonl.KindOf(b) == jsonl.KindObject && str(b, "type") == "toolCall" {
					name := str(b, "name")
					var sb strings.Builder
					sb.WriteString(name)
					args, _ := lookup(b, "arguments")
					flatten(&sb, args)
					add(KindToolCall, name, sb.String())
				}
				return true
			})
		case "toolResult":
			add(KindToolResult, str(msg, "toolName"), contentText(content))
		case "bashExecution":
			var sb strings.Builder
			joinTo(&sb, str(msg, "command"))
			joinTo(&sb, str(msg, "output"))
			add(KindBash, "bash", sb.String())
		case "system":
			add(KindSystem, "", contentText(content))
		default:
			add(KindCustom, "", contentText(content))
		}
	case jsonl.TypeCustomMessage:
		content, _ := lookup(e.Raw, "content")
		add(KindCustom, "", contentText(content))
	case jsonl.TypeCompaction:
		add(KindCompaction, "", str(e.Raw, "summary"))
	case jsonl.TypeBranchSummary:
		add(KindBranchSummary, "", str(e.Raw, "summary"))
	case jsonl.TypeContextEdit:
		// The replacement the model sees from then on; the target keeps
		// its own text (the history is unchanged). An omission (null)
		// has no text.
		rep, _ := lookup(e.Raw, "replacement")
		if jsonl.KindOf(rep) == jsonl.KindObject {
			content, _ := lookup(rep, "content")
			add(KindContextEdit, "", contentText(content))
		}
	case jsonl.TypeLabel:
		add(KindLabel, "", str(e.Raw, "label"))
	case jsonl.TypeSessionInfo:
		add(KindName, "", str(e.Raw, "name"))
	}
	return dst
}

// contentText returns a message content's text: the string itself, or
// the text blocks of an array joined by newlines (images are left out).
func contentText(content []byte) string {
	switch jsonl.KindOf(content) {
	case jsonl.KindString:
		s, _ := jsonl.String(content)
		return s
	case jsonl.KindArray:
		var sb strings.Builder
		_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
			if jsonl.KindOf(b) != jsonl.KindObject {
				return true
			}
			if t, _ := lookup(b, "type"); string(t) == `"text"` {
				v, _ := lookup(b, "text")
				s, _ := jsonl.String(v)
				joinTo(&sb, s)
			}
			return true
		})
		return sb.String()
	}
	return ""
}

func joinTo(sb *strings.Builder, s string) {
	if s == "" {
		return
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
	sb.WriteString(s)
}

// flatten writes the keys and values of a JSON value as text, strings
// decoded (so an argument's "\n" is a line break, not a token "n..."),
// each on its own line.
func flatten(sb *strings.Builder, v []byte) {
	switch jsonl.KindOf(v) {
	case jsonl.KindObject:
		_ = jsonl.MembersTrusted(v, func(key, val []byte) bool {
			sb.WriteByte('\n')
			sb.WriteString(keyString(key))
			sb.WriteByte(':')
			flatten(sb, val)
			return true
		})
	case jsonl.KindArray:
		_ = jsonl.ElementsTrusted(v, func(b []byte) bool {
			flatten(sb, b)
			return true
		})
	case jsonl.KindString:
		s, _ := jsonl.String(v)
		sb.WriteByte(' ')
		sb.WriteString(s)
	case jsonl.KindNumber, jsonl.KindBool:
		sb.WriteByte(' ')
		sb.Write(v)
	}
}

// agentUseDocs returns the texts of one AgentUse file (session.json,
// message.json or a part), with the id of the entry they belong to and
// its time in ms (0 when unknown).
func agentUseDocs(file fileKind, raw []byte, dst []doc) ([]doc, string, int64) {
	if jsonl.KindOf(trimWS(raw)) != jsonl.KindObject || !jsonl.Valid(raw) {
		return dst, "", 0
	}
	obj := trimWS(raw)
	add := func(k Kind, tool, text string) {
		if strings.TrimSpace(text) != "" {
			dst = append(dst, doc{kind: k, tool: tool, text: text})
		}
	}
	str := func(obj []byte, path ...string) string {
		for _, k := range path {
			obj, _ = lookup(obj, k)
		}
		s, _ := jsonl.String(obj)
		return s
	}
	num := func(obj []byte, path ...string) int64 {
		for _, k := range path {
			obj, _ = lookup(obj, k)
		}
		f, ok := jsonl.Number(obj)
		if !ok || f != f {
			return 0
		}
		return int64(f)
	}
	id := str(obj, "id")
	switch file {
	case fileAUSession:
		add(KindName, "", str(obj, "agent", "name"))
		return dst, id, num(obj, "time", "created")
	case fileAUMessage:
		add(KindUser, "", str(obj, "user", "prompt", "user"))
		add(KindTask, "", str(obj, "user", "prompt", "task"))
		return dst, id, num(obj, "time", "created")
	}
	ts := num(obj, "time", "start")
	switch str(obj, "type") {
	case "text":
		if str(obj, "role") == "user" {
			add(KindUser, "", str(obj, "text"))
		} else {
			add(KindText, "", str(obj, "text"))
		}
	case "reasoning":
		add(KindThinking, "", str(obj, "text"))
	case "tool":
		tool := str(obj, "tool")
		state, _ := lookup(obj, "state")
		var sb strings.Builder
		sb.WriteString(tool)
		in, _ := lookup(state, "input")
		flatten(&sb, in)
		out, _ := lookup(state, "output")
		flatten(&sb, out)
		if e := str(state, "error"); e != "" {
			sb.WriteByte('\n')
			sb.WriteString(e)
		}
		add(KindTool, tool, sb.String())
		if t := num(state, "time", "start"); t != 0 {
			ts = t
		}
	case "error":
		add(KindError, "", str(obj, "message"))
	}
	return dst, id, ts
}

func trimWS(b []byte) []byte {
	i := jsonl.SkipWS(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\n' || b[j-1] == '\r' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// The texts are extracted from lines and files already validated (by
// jsonl.ParseEntry, jsonl.Valid), so members are found without
// validating them again.

// lookup returns the raw value of the last member named key of a valid
// object.
func lookup(obj []byte, key string) ([]byte, bool) {
	var v []byte
	found := false
	_ = jsonl.MembersTrusted(obj, func(k, val []byte) bool {
		if string(k) == key || bytes.IndexByte(k, '\\') >= 0 && keyString(k) == key {
			v, found = val, true
		}
		return true
	})
	return v, found
}

// keyString decodes a raw key (without its quotes).
func keyString(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k)
	}
	s, _ := jsonl.String(append(append([]byte{'"'}, k...), '"'))
	return s
}
