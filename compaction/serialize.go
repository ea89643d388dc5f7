package compaction

import (
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// The wrappers pi's convertToLlm puts around summaries (pi-format.md
// section 12). Note that the branch summary has no newline before its
// closing tag.
const (
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
)

// ToolResultMaxChars is how many UTF-16 units of a tool result
// SerializeConversation keeps.
const ToolResultMaxChars = 2000

// ConvertToLLM is pi's convertToLlm: it maps messages to the form the
// model sees. A bashExecution message becomes a user message with
// BashExecutionText (or nothing when excludeFromContext is set), a custom
// message a user message with its content, branchSummary and
// compactionSummary messages user messages wrapped in their summary
// preambles; user, assistant and toolResult messages pass through as they
// are, and any other role is dropped.
func ConvertToLLM(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		f := fields(m.Raw, "role", "content", "summary", "timestamp", "excludeFromContext")
		role, _ := jsonl.String(f[0])
		var text string
		switch role {
		case "user", "assistant", "toolResult":
			out = append(out, m)
			continue
		case "bashExecution":
			if truthy(f[4]) {
				continue
			}
			text = BashExecutionText(m.Raw)
		case "custom":
			b := jsonl.NewObject(len(f[1])+64).String("role", "user")
			if s, ok := jsonl.String(f[1]); ok {
				b.Raw("content", textBlocks(s))
			} else {
				addRaw(b, "content", f[1])
			}
			addRaw(b, "timestamp", f[3])
			out = append(out, Message{Raw: b.Bytes(), Entry: m.Entry})
			continue
		case "branchSummary":
			text = BranchSummaryPrefix + jsString(f[2]) + BranchSummarySuffix
		case "compactionSummary":
			text = CompactionSummaryPrefix + jsString(f[2]) + CompactionSummarySuffix
		default:
			continue
		}
		b := jsonl.NewObject(len(text)+64).String("role", "user").Raw("content", textBlocks(text))
		addRaw(b, "timestamp", f[3])
		out = append(out, Message{Raw: b.Bytes(), Entry: m.Entry})
	}
	return out
}

// textBlocks returns [{"type":"text","text":s}].
func textBlocks(s string) []byte {
	obj := jsonl.NewObject(len(s)+32).String("type", "text").String("text", s).Bytes()
	out := make([]byte, 0, len(obj)+2)
	out = append(out, '[')
	out = append(out, obj...)
	return append(out, ']')
}

// jsString is String(v) for the values a template literal interpolates
// (see jsonl.AppendJSText).
func jsString(v []byte) string { return string(jsonl.AppendJSText(nil, v)) }

// joinString is how Array.prototype.join renders an element: null and
// undefined as "", anything else as String(v).
func joinString(v []byte) string {
	if k := jsonl.KindOf(v); k == jsonl.KindAbsent || k == jsonl.KindNull {
		return ""
	}
	return jsString(v)
}

// BashExecutionText is pi's bashExecutionToText: "Ran `cmd`", then the
// output in a fence or "(no output)", then "(command cancelled)" or the
// non-zero exit code, then the truncation note when the output was
// truncated and saved.
func BashExecutionText(msg []byte) string {
	f := fields(msg, "command", "output", "cancelled", "exitCode", "truncated", "fullOutputPath")
	var b strings.Builder
	b.WriteString("Ran `")
	b.WriteString(jsString(f[0]))
	b.WriteString("`\n")
	if truthy(f[1]) {
		b.WriteString("```\n")
		b.WriteString(jsString(f[1]))
		b.WriteString("\n```")
	} else {
		b.WriteString("(no output)")
	}
	if truthy(f[2]) {
		b.WriteString("\n\n(command cancelled)")
	} else if k := jsonl.KindOf(f[3]); k != jsonl.KindAbsent && k != jsonl.KindNull && !isZero(f[3]) {
		b.WriteString("\n\nCommand exited with code ")
		b.WriteString(jsString(f[3]))
	}
	if truthy(f[4]) && truthy(f[5]) {
		b.WriteString("\n\n[Output truncated. Full output: ")
		b.WriteString(jsString(f[5]))
		b.WriteString("]")
	}
	return b.String()
}

// isZero reports whether v is the number 0 (JavaScript's !== 0 is false
// only for the numbers 0 and -0).
func isZero(v []byte) bool {
	f, ok := jsonl.Number(v)
	return ok && f == 0
}

// SerializeConversation is pi's serializeConversation over messages that
// went through ConvertToLLM. It returns the parts joined by a blank line:
//
//   - user: "[User]: " and the string content or the text blocks joined
//     without separator (images dropped); skipped when empty;
//   - assistant: "[Assistant]: " with the text blocks joined by "\n",
//     then "[Assistant tool calls]: " with the calls joined by "; ", each
//     as name(k1=V1, k2=V2) with every value in JSON.stringify form; each
//     only when the message has blocks of that kind (thinking is left out,
//     pi 1.x: 0.73.1 wrote "[Assistant thinking]: " first);
//   - toolResult: "[Tool result]: " and the string content or the text
//     blocks joined without separator, skipped when empty, cut to
//     ToolResultMaxChars UTF-16 units with
//     "\n\n[... N more characters truncated]" appended.
//
// Other roles are skipped. Where pi's cut would split a surrogate pair,
// sessctl cuts one unit earlier (a Go string cannot hold half a pair);
// N is still counted as pi counts it.
func SerializeConversation(msgs []Message) string {
	var parts []string
	for _, m := range msgs {
		f := fields(m.Raw, "role", "content")
		role, _ := jsonl.String(f[0])
		switch role {
		case "user":
			var text string
			if s, ok := jsonl.String(f[1]); ok {
				text = s
			} else {
				text = joinTextBlocks(f[1])
			}
			if text != "" {
				parts = append(parts, "[User]: "+text)
			}
		case "assistant":
			var texts, calls []string
			eachElem(f[1], func(b []byte) {
				bf := fields(b, "type", "text", "name", "arguments")
				switch t, _ := jsonl.String(bf[0]); t {
				case "text":
					texts = append(texts, joinString(bf[1]))
				case "toolCall":
					calls = append(calls, jsString(bf[2])+"("+toolArgs(bf[3])+")")
				}
			})
			if len(texts) > 0 {
				parts = append(parts, "[Assistant]: "+strings.Join(texts, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case "toolResult":
			text, ok := jsonl.String(f[1])
			if !ok {
				text = joinTextBlocks(f[1])
			}
			if text != "" {
				parts = append(parts, "[Tool result]: "+truncateForSummary(text, ToolResultMaxChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// joinTextBlocks joins the text of the "text" blocks of a content array
// without separator, as content.filter(text).map(c => c.text).join("")
// does (a missing or null text joins as "").
func joinTextBlocks(content []byte) string {
	var b strings.Builder
	eachElem(content, func(v []byte) {
		bf := fields(v, "type", "text")
		if t, _ := jsonl.String(bf[0]); t != "text" {
			return
		}
		b.WriteString(joinString(bf[1]))
	})
	return b.String()
}

// toolArgs renders Object.entries(args) as "k=JSON, k2=JSON", in
// JavaScript property order (array-index keys first).
func toolArgs(args []byte) string {
	if jsonl.KindOf(args) != jsonl.KindObject {
		return ""
	}
	canon, err := jsonl.Canonical(nil, args)
	if err != nil {
		return ""
	}
	var parts []string
	_ = jsonl.Members(canon, func(m *jsonl.Member) bool {
		parts = append(parts, m.KeyString()+"="+string(m.Value))
		return true
	})
	return strings.Join(parts, ", ")
}

// truncateForSummary keeps the first max UTF-16 units of s and notes how
// many were cut.
func truncateForSummary(s string, max int) string {
	n := UTF16Len(s)
	if n <= max {
		return s
	}
	units := 0
	cut := len(s)
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > max {
			cut = i
			break
		}
		units += w
	}
	return s[:cut] + "\n\n[... " + strconv.Itoa(n-max) + " more characters truncated]"
}
