package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
)

// lineWidth bounds the text of one entry line, in runes.
const lineWidth = 100

// WriteEntryLine writes one entry as "[id] hh:mm:ss type ...: text", the
// line of 'sessctl tail': the id ("-" when it is not a string), the
// entry's time of day (UTC) and EntryLine.
func WriteEntryLine(w io.Writer, en *engine.Entry) error {
	id := en.ID
	if en.IDKind != engine.KindString {
		id = "-"
	}
	when := "--:--:--"
	if ms, ok := jsonl.ParseDate(en.Timestamp); ok {
		when = time.UnixMilli(int64(ms)).UTC().Format("15:04:05")
	}
	_, err := fmt.Fprintf(w, "[%s] %s %s\n", id, when, EntryLine(en))
	return err
}

// EntryLine describes an entry in one line: its type and the first line
// of its text, cut to 100 characters.
func EntryLine(en *engine.Entry) string {
	str := func(key string) string {
		s, _ := en.StringField(key)
		return s
	}
	switch en.Type {
	case jsonl.TypeMessage:
		m, err := message.Decode(en.Message())
		if err != nil {
			return "message (not an object)"
		}
		return MessageLine(m)
	case jsonl.TypeModelChange:
		return "model_change " + str("provider") + "/" + str("modelId")
	case jsonl.TypeThinkingLevelChange:
		return "thinking_level_change " + str("thinkingLevel")
	case jsonl.TypeCompaction:
		tokens, _ := en.Field("tokensBefore")
		return "compaction (" + string(tokens) + " tokens, kept from " + str("firstKeptEntryId") + "): " + firstLine(str("summary"))
	case jsonl.TypeBranchSummary:
		return "branch_summary from " + str("fromId") + ": " + firstLine(str("summary"))
	case jsonl.TypeLabel:
		if l, ok := en.StringField("label"); ok && l != "" {
			return "label " + str("targetId") + ": " + human.Quote(l)
		}
		return "label " + str("targetId") + " cleared"
	case jsonl.TypeSessionInfo:
		return "session_info: " + firstLine(str("name"))
	case jsonl.TypeCustom:
		return "custom " + str("customType")
	case jsonl.TypeCustomMessage:
		raw, _ := en.Field("content")
		text := ""
		if m, err := message.Decode(customJSON(raw)); err == nil {
			if c, ok := m.(*message.Custom); ok {
				text = c.Content.String()
			}
		}
		return "custom_message " + str("customType") + ": " + firstLine(text)
	}
	return en.Type
}

// customJSON wraps a custom_message entry's content as a custom message,
// to read it with the message types.
func customJSON(content []byte) []byte {
	if content == nil {
		content = []byte(`""`)
	}
	return append(append([]byte(`{"role":"custom","content":`), content...), '}')
}

// messageLine describes a message in one line.
func MessageLine(m message.Message) string {
	switch m := m.(type) {
	case *message.User:
		return "user: " + firstLine(m.Content.String())
	case *message.Assistant:
		var text, calls []string
		for _, b := range m.Content {
			switch b := b.(type) {
			case *message.TextContent:
				text = append(text, b.Text)
			case *message.ToolCall:
				calls = append(calls, b.Name)
			}
		}
		s := "assistant " + m.Provider + "/" + m.Model + " (" + string(m.StopReason) + ")"
		if t := firstLine(strings.Join(text, " ")); t != "" {
			s += ": " + t
		}
		if len(calls) > 0 {
			s += " -> " + strings.Join(calls, ", ")
		}
		if m.ErrorMessage != "" {
			s += " [error: " + firstLine(m.ErrorMessage) + "]"
		}
		return s
	case *message.ToolResult:
		s := "toolResult " + m.ToolName
		if m.IsError {
			s += " (error)"
		}
		return s + ": " + firstLine(message.Blocks(m.Content...).String())
	case *message.BashExecution:
		s := "bashExecution $ " + firstLine(m.Command)
		if m.HasExitCode {
			s += " (exit " + strconv.FormatInt(m.ExitCode, 10) + ")"
		}
		return s
	case *message.Custom:
		return "custom " + m.CustomType + ": " + firstLine(m.Content.String())
	}
	return m.Role()
}

// firstLine is the first non-blank line of s, cut to lineWidth runes. It
// copies only what it returns: s may be a 50 MB tool output.
func firstLine(s string) string {
	for rest := s; rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		if l = strings.TrimSpace(l); l != "" {
			s = l
			break
		}
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	n := 0
	for i := range s {
		if n == lineWidth {
			return string([]rune(s[:i])) + "…"
		}
		n++
	}
	return s
}
