package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var tailCommand = &command{
	name:    "tail",
	summary: "print a session's last entries, and with -f follow it as it grows",
	usage: `
Usage: sessctl tail [-f] [-n N] [--json] SESSION

SESSION is a file path, a session id or a unique prefix of one, looked up
in the store given by --store (default: pi's).

Prints the last N entries of the session file (default 10), in file
order, one line each:

  [a1b2c3d4] 09:00:02 user: the first line of the message
  [b2c3d4e5] 09:00:03 assistant anthropic/claude-sonnet-4-5 (toolUse): the text -> read, bash
  [c3d4e5f6] 09:00:04 toolResult read: the first line of the output
  [d4e5f6a7] 09:00:05 model_change anthropic/claude-haiku-4-5

Times are the entries' timestamps (UTC). --json prints the stored lines
instead, byte for byte, as JSONL.

With -f, tail then follows the file as another process (an agent, pi)
appends to it, printing each new entry when its line is complete, until
it is interrupted. It reads only what was appended, looking every 200 ms
(polling: no file notification is needed). The session is opened
read-only: no lock is taken and nothing is written. A file that is
replaced is read again; one that is removed ends tail with an error.

Examples:
  sessctl tail 390d8e15
  sessctl tail -f -n 0 390d8e15
  sessctl tail -f --json 390d8e15 | jq -c .message.role
`,
}

func init() { register(tailCommand).run = runTail }

func runTail(e *env, args []string) int {
	fs := e.flags(tailCommand)
	store := storeFlag(fs)
	follow := fs.Bool("f", false, "follow the file: print entries as they are appended, until interrupted")
	n := fs.Int("n", 10, "print the last `N` entries first (0: none)")
	asJSON := fs.Bool("json", false, "print the stored lines as JSONL")
	if code := e.parse(tailCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if *n < 0 {
		return e.usageError("-n must not be negative")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	path, err := resolveSession(*store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	s, err := engine.Open(e.ctx, path, engine.Options{ReadOnly: true})
	if err != nil {
		return e.fail(err)
	}
	defer s.Close()
	e.warnVersion(s.SessionFile(), s.Header().Entry)
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	print := func(en *engine.Entry) {
		if *asJSON {
			w.Write(en.Raw)
			w.WriteByte('\n')
		} else {
			writeTailLine(w, en)
		}
	}
	all := s.Entries()
	for _, en := range all[max(0, len(all)-*n):] {
		print(en)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	if !*follow {
		return exitOK
	}
	for en, err := range s.Follow(e.ctx, engine.FollowInterval) {
		if err != nil {
			return e.fail(err)
		}
		print(en)
		if err := w.Flush(); err != nil {
			return e.fail(err)
		}
	}
	return exitOK
}

// tailWidth bounds the text of one tail line, in runes.
const tailWidth = 100

// writeTailLine writes one entry as "[id] hh:mm:ss type ...: text".
func writeTailLine(w io.Writer, en *engine.Entry) {
	id := en.ID
	if en.IDKind != engine.KindString {
		id = "-"
	}
	when := "--:--:--"
	if ms, ok := jsonl.ParseDate(en.Timestamp); ok {
		when = time.UnixMilli(int64(ms)).UTC().Format("15:04:05")
	}
	fmt.Fprintf(w, "[%s] %s %s\n", id, when, tailText(en))
}

// tailText describes an entry in one line.
func tailText(en *engine.Entry) string {
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
		return messageLine(m)
	case jsonl.TypeModelChange:
		return "model_change " + str("provider") + "/" + str("modelId")
	case jsonl.TypeThinkingLevelChange:
		return "thinking_level_change " + str("thinkingLevel")
	case jsonl.TypeCompaction:
		tokens, _ := en.Field("tokensBefore")
		return "compaction (" + string(tokens) + " tokens, kept from " + str("firstKeptEntryId") + "): " + tailLine(str("summary"))
	case jsonl.TypeBranchSummary:
		return "branch_summary from " + str("fromId") + ": " + tailLine(str("summary"))
	case jsonl.TypeLabel:
		if l, ok := en.StringField("label"); ok && l != "" {
			return "label " + str("targetId") + ": " + strconv.Quote(l)
		}
		return "label " + str("targetId") + " cleared"
	case jsonl.TypeSessionInfo:
		return "session_info: " + tailLine(str("name"))
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
		return "custom_message " + str("customType") + ": " + tailLine(text)
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
func messageLine(m message.Message) string {
	switch m := m.(type) {
	case *message.User:
		return "user: " + tailLine(m.Content.String())
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
		if t := tailLine(strings.Join(text, " ")); t != "" {
			s += ": " + t
		}
		if len(calls) > 0 {
			s += " -> " + strings.Join(calls, ", ")
		}
		if m.ErrorMessage != "" {
			s += " [error: " + tailLine(m.ErrorMessage) + "]"
		}
		return s
	case *message.ToolResult:
		s := "toolResult " + m.ToolName
		if m.IsError {
			s += " (error)"
		}
		return s + ": " + tailLine(message.Blocks(m.Content...).String())
	case *message.BashExecution:
		s := "bashExecution $ " + tailLine(m.Command)
		if m.HasExitCode {
			s += " (exit " + strconv.FormatInt(m.ExitCode, 10) + ")"
		}
		return s
	case *message.Custom:
		return "custom " + m.CustomType + ": " + tailLine(m.Content.String())
	}
	return m.Role()
}

// tailLine is the first non-blank line of s, cut to tailWidth runes.
func tailLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			s = l
			break
		}
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > tailWidth {
		return string(r[:tailWidth]) + "…"
	}
	return s
}
