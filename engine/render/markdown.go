package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

type mdWriter struct {
	w *bufio.Writer
	d *doc
}

// Markdown writes the branch of s (root first, redacted as opts asks) as
// a Markdown document: a title and the session's details, then one
// section per message. Thinking is in a collapsible <details> block, a
// tool call is its name and its arguments as a JSON block, a tool result
// is a code block; compaction and branch summaries, custom messages and
// model or thinking level changes are marked. Images are noted, not
// embedded. The document is streamed: when Markdown fails, part of it may
// have been written.
func Markdown(w io.Writer, s *Session, branch []*engine.Entry, opts Options) error {
	return write(w, s, branch, opts, (*doc).markdown)
}

func (d *doc) markdown(w *bufio.Writer) error {
	m := &mdWriter{w: w, d: d}
	title, err := d.title()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n\n", mdLine(title))
	for _, kv := range d.details() {
		v := mdLine(kv[1])
		switch kv[0] {
		case "Session", "Working directory", "Parent session", "Leaf":
			v = mdCode(v)
		}
		fmt.Fprintf(w, "- **%s:** %s\n", kv[0], v)
	}
	w.WriteString("\n---\n\n")
	err = d.s.each(d.path, func(raw *jsonl.Entry) error {
		en, err := d.view(raw)
		if err != nil {
			return err
		}
		m.entry(en)
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}

// mdLine makes text safe for a heading or list item: one line.
func mdLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdCode is s as inline code, with a fence longer than any run of
// backticks in s.
func mdCode(s string) string {
	s = mdLine(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdBlock writes s as a fenced code block to w, with a fence longer
// than any run of backticks in s.
func mdBlock(w *bufio.Writer, lang, s string) {
	n := longestRun(s, '`') + 1
	if n < 3 {
		n = 3
	}
	fence := strings.Repeat("`", n)
	w.WriteString(fence)
	w.WriteString(lang)
	w.WriteByte('\n')
	w.WriteString(strings.TrimRight(s, "\n"))
	w.WriteByte('\n')
	w.WriteString(fence)
	w.WriteByte('\n')
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// heading writes "## Title · `id` · time · label: x".
func (m *mdWriter) heading(title string, en *jsonl.Entry) {
	w := m.w
	w.WriteString("## ")
	w.WriteString(title)
	part := func(s string) {
		w.WriteString(" · ")
		w.WriteString(s)
	}
	if en.IDKind != jsonl.KindAbsent {
		part(mdCode(jsonl.KeyString(en.ID)))
	}
	if en.Timestamp != "" {
		part(isoShort(en.Timestamp))
	}
	if l, ok := m.d.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		part("label: " + mdCode(l))
	}
	if e, ok := m.d.edits[en.ID]; ok && en.IDKind == jsonl.KindString {
		part(e.text(mdCode))
	}
	w.WriteString("\n\n")
}

func (m *mdWriter) note(en *jsonl.Entry, text string) {
	fmt.Fprintf(m.w, "_%s_ (%s)\n\n", text, mdCode(jsonl.KeyString(en.ID)))
}

func (m *mdWriter) text(s string) {
	s = strings.TrimRight(s, "\n")
	if s != "" {
		m.w.WriteString(s)
		m.w.WriteString("\n\n")
	}
}

func (m *mdWriter) entry(en *jsonl.Entry) {
	switch en.Type {
	case jsonl.TypeMessage:
		mv := msgOf(en)
		msg := mv.obj()
		switch role := msg.s("role"); role {
		case "user":
			m.heading("User", en)
			m.content(msg.get("content"))
		case "assistant":
			title := "Assistant · " + mdLine(stats.ModelName(msg.s("provider"), msg.s("model")))
			m.heading(title, en)
			m.content(msg.get("content"))
			if u := msg.get("usage"); u.kind() == jsonl.KindObject {
				us := stats.ReadUsage(u)
				fmt.Fprintf(m.w, "<sub>%d tokens (%d in, %d out, %d cache read, %d cache write), %s</sub>\n\n",
					us.TotalTokens, us.Input, us.Output, us.CacheRead, us.CacheWrite, human.Cost(us.Cost.Total))
			}
			if sr := msg.s("stopReason"); sr != "" && sr != "stop" && sr != "toolUse" {
				m.text("> Stopped: " + mdLine(strings.TrimSpace(sr+" "+msg.s("errorMessage"))))
			}
		case "toolResult":
			title := "Tool result · " + mdCode(msg.s("toolName"))
			if msg.get("isError").isTrue() {
				title += " · error"
			}
			m.heading(title, en)
			var parts []string
			for _, b := range contentBlocks(msg.get("content")) {
				switch b.typ {
				case "text":
					parts = append(parts, b.text)
				case "image":
					parts = append(parts, "[image "+imageNote(b)+"]")
				}
			}
			mdBlock(m.w, "", strings.Join(parts, "\n"))
			m.w.WriteByte('\n')
		case "bashExecution":
			m.heading("Shell command", en)
			mdBlock(m.w, "sh", "$ "+msg.s("command"))
			m.w.WriteByte('\n')
			mdBlock(m.w, "", msg.s("output"))
			m.w.WriteByte('\n')
			if c, ok := msg.get("exitCode").num(); ok {
				m.text(fmt.Sprintf("Exit code %v.", c))
			}
		case "custom":
			m.heading("Custom message · "+mdCode(msg.s("customType")), en)
			m.content(msg.get("content"))
		default:
			m.heading("Message · "+mdCode(human.Or(role, "no role")), en)
			if c := msg.get("content"); len(c) > 0 {
				m.content(c)
			} else {
				mdBlock(m.w, "json", indentJSON(mv))
				m.w.WriteByte('\n')
			}
		}
	case jsonl.TypeCompaction:
		m.heading("Compaction", en)
		tokens, _ := entryField(en, "tokensBefore").num()
		line := fmt.Sprintf("%v tokens summarised", tokens)
		if k := entryField(en, "firstKeptEntryId").str(); k != "" {
			line += "; kept from " + mdCode(k)
		}
		m.text("> " + line)
		m.text(entryField(en, "summary").str())
	case jsonl.TypeBranchSummary:
		m.heading("Branch summary", en)
		if f := entryField(en, "fromId").str(); f != "" {
			m.text("> Summary of the branch left at " + mdCode(f))
		}
		m.text(entryField(en, "summary").str())
	case jsonl.TypeCustomMessage:
		title := "Custom message · " + mdCode(entryField(en, "customType").str())
		if d := entryField(en, "display"); d.kind() == jsonl.KindBool && !d.isTrue() {
			title += " · hidden"
		}
		m.heading(title, en)
		m.content(entryField(en, "content"))
	default:
		m.note(en, noteText(en, mdCode))
	}
}

// noteText is the one-line note an export gives an entry without a
// section of its own (model and thinking-level changes, names, labels,
// custom and unknown entries), with code marking the literal values.
func noteText(en *jsonl.Entry, code func(string) string) string {
	switch en.Type {
	case jsonl.TypeModelChange:
		return "Model changed to " + code(stats.ModelName(entryField(en, "provider").str(), entryField(en, "modelId").str()))
	case jsonl.TypeThinkingLevelChange:
		return "Thinking level set to " + code(entryField(en, "thinkingLevel").str())
	case jsonl.TypeSessionInfo:
		return "Session named " + code(entryField(en, "name").str())
	case jsonl.TypeLabel:
		if l := entryField(en, "label").str(); l != "" {
			return "Label " + code(l) + " on " + code(entryField(en, "targetId").str())
		}
		return "Label cleared on " + code(entryField(en, "targetId").str())
	case jsonl.TypeCustom:
		return "Custom entry " + code(entryField(en, "customType").str())
	case jsonl.TypeUsage:
		us := stats.ReadUsage(entryField(en, "usage"))
		return fmt.Sprintf("Usage %s of %s: %d tokens %s", code(entryField(en, "kind").str()),
			code(stats.ModelName(entryField(en, "provider").str(), entryField(en, "model").str())), us.TotalTokens, human.Cost(us.Cost.Total))
	case jsonl.TypeContextEdit:
		if entryField(en, "replacement").kind() == jsonl.KindNull {
			return "Context edit: " + code(entryField(en, "targetId").str()) + " omitted from the model context"
		}
		return "Context edit: " + code(entryField(en, "targetId").str()) + " replaced in the model context"
	}
	return "Entry of type " + code(human.Or(en.Type, "none"))
}

func (m *mdWriter) content(c rview) {
	for _, b := range contentBlocks(c) {
		switch b.typ {
		case "text":
			m.text(b.text)
		case "thinking":
			if b.redacted {
				m.text("<details>\n<summary>Thinking (redacted by the provider)</summary>\n</details>")
				continue
			}
			m.w.WriteString("<details>\n<summary>Thinking</summary>\n\n")
			m.w.WriteString(strings.TrimRight(b.text, "\n"))
			m.w.WriteString("\n\n</details>\n\n")
		case "toolCall":
			fmt.Fprintf(m.w, "**Tool call:** %s", mdCode(b.name))
			if b.callID != "" {
				fmt.Fprintf(m.w, " (%s)", mdCode(b.callID))
			}
			m.w.WriteString("\n\n")
			mdBlock(m.w, "json", indentJSON(b.args))
			m.w.WriteByte('\n')
		case "image":
			m.text("_[image " + imageNote(b) + "]_")
		default:
			mdBlock(m.w, "json", indentJSON(b.raw))
			m.w.WriteByte('\n')
		}
	}
}

// indentJSON pretty-prints a raw value, keeping its key order.
func indentJSON(v rview) string {
	if len(v) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		return string(v)
	}
	return b.String()
}
