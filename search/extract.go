package search

import (
	"bytes"
	"strings"
	"unsafe"

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
	return lineDocsIn(&textBuf{}, e, dst)
}

// textBuf builds texts in one buffer. A shared one (a build's) returns
// texts that are views of its buffer, valid until reset: the texts of
// one line take no memory of their own. Otherwise each text is copied
// out. Tool names are always copies (an index keeps them).
type textBuf struct {
	b      []byte
	shared bool
}

// reset empties the buffer (a huge line's is let go).
func (tb *textBuf) reset() {
	if cap(tb.b) > 4<<20 {
		tb.b = nil
	}
	tb.b = tb.b[:0]
}

// text returns what was written since start as a text.
func (tb *textBuf) text(start int) string {
	b := tb.b[start:]
	if len(b) == 0 {
		return ""
	}
	if tb.shared {
		return unsafe.String(&b[0], len(b))
	}
	s := string(b)
	tb.b = tb.b[:start]
	return s
}

// str returns the decoded JSON string v ("" for another value).
func (tb *textBuf) str(v []byte) string {
	start := len(tb.b)
	tb.b, _ = jsonl.AppendDecoded(tb.b, v)
	return tb.text(start)
}

// is reports whether the JSON value v is the string s.
func (tb *textBuf) is(v []byte, s string) bool {
	if len(v) == len(s)+2 && v[0] == '"' && string(v[1:len(v)-1]) == s {
		return true
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	start := len(tb.b)
	var ok bool
	tb.b, ok = jsonl.AppendDecoded(tb.b, v)
	eq := ok && string(tb.b[start:]) == s
	tb.b = tb.b[:start]
	return eq
}

// join appends the decoded JSON string v to the text begun at start, a
// newline before it when the text is not empty.
func (tb *textBuf) join(start int, v []byte) {
	at := len(tb.b)
	if at > start {
		tb.b = append(tb.b, '\n')
	}
	var ok bool
	if tb.b, ok = jsonl.AppendDecoded(tb.b, v); !ok || len(tb.b) == at+1 {
		tb.b = tb.b[:at] // not a string, or empty: nothing joined
	}
}

func lineDocsIn(tb *textBuf, e *jsonl.Entry, dst []doc) []doc {
	add := func(k Kind, tool, text string) {
		if strings.TrimSpace(text) != "" {
			dst = append(dst, doc{kind: k, tool: tool, text: text})
		}
	}
	str := func(obj []byte, key string) string {
		v, _ := lookup(obj, key)
		return tb.str(v)
	}
	// An assistant message's texts of one type, joined.
	joined := func(content []byte, typ string) string {
		start := len(tb.b)
		_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
			if jsonl.KindOf(b) == jsonl.KindObject {
				if t, _ := lookup(b, "type"); tb.is(t, typ) {
					v, _ := lookup(b, typ)
					tb.join(start, v)
				}
			}
			return true
		})
		return tb.text(start)
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
			add(KindUser, "", contentText(tb, content))
		case "assistant":
			add(KindText, "", joined(content, "text"))
			add(KindThinking, "", joined(content, "thinking"))
			_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
				if jsonl.KindOf(b) != jsonl.KindObject {
					return true
				}
				if t, _ := lookup(b, "type"); tb.is(t, "toolCall") {
					v, _ := lookup(b, "name")
					name, _ := jsonl.String(v)
					start := len(tb.b)
					tb.b = append(tb.b, name...)
					args, _ := lookup(b, "arguments")
					flatten(tb, args)
					add(KindToolCall, name, tb.text(start))
				}
				return true
			})
		case "toolResult":
			v, _ := lookup(msg, "toolName")
			name, _ := jsonl.String(v)
			add(KindToolResult, name, contentText(tb, content))
		case "bashExecution":
			start := len(tb.b)
			v, _ := lookup(msg, "command")
			tb.join(start, v)
			v, _ = lookup(msg, "output")
			tb.join(start, v)
			add(KindBash, "bash", tb.text(start))
		case "system":
			add(KindSystem, "", contentText(tb, content))
		default:
			add(KindCustom, "", contentText(tb, content))
		}
	case jsonl.TypeCustomMessage:
		content, _ := lookup(e.Raw, "content")
		add(KindCustom, "", contentText(tb, content))
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
			add(KindContextEdit, "", contentText(tb, content))
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
func contentText(tb *textBuf, content []byte) string {
	switch jsonl.KindOf(content) {
	case jsonl.KindString:
		return tb.str(content)
	case jsonl.KindArray:
		start := len(tb.b)
		_ = jsonl.ElementsTrusted(content, func(b []byte) bool {
			if jsonl.KindOf(b) != jsonl.KindObject {
				return true
			}
			if t, _ := lookup(b, "type"); string(t) == `"text"` {
				v, _ := lookup(b, "text")
				tb.join(start, v)
			}
			return true
		})
		return tb.text(start)
	}
	return ""
}

// flatten writes the keys and values of a JSON value as text, strings
// decoded (so an argument's "\n" is a line break, not a token "n..."),
// each on its own line.
func flatten(tb *textBuf, v []byte) {
	switch jsonl.KindOf(v) {
	case jsonl.KindObject:
		_ = jsonl.MembersTrusted(v, func(key, val []byte) bool {
			tb.b = append(tb.b, '\n')
			if bytes.IndexByte(key, '\\') < 0 {
				tb.b = append(tb.b, key...)
			} else {
				tb.b = append(tb.b, keyString(key)...)
			}
			tb.b = append(tb.b, ':')
			flatten(tb, val)
			return true
		})
	case jsonl.KindArray:
		_ = jsonl.ElementsTrusted(v, func(b []byte) bool {
			flatten(tb, b)
			return true
		})
	case jsonl.KindString:
		tb.b = append(tb.b, ' ')
		tb.b, _ = jsonl.AppendDecoded(tb.b, v)
	case jsonl.KindNumber, jsonl.KindBool:
		tb.b = append(tb.b, ' ')
		tb.b = append(tb.b, v...)
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
		tb := &textBuf{b: []byte(tool)}
		in, _ := lookup(state, "input")
		flatten(tb, in)
		out, _ := lookup(state, "output")
		flatten(tb, out)
		if e := str(state, "error"); e != "" {
			tb.b = append(tb.b, '\n')
			tb.b = append(tb.b, e...)
		}
		add(KindTool, tool, tb.text(0))
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
