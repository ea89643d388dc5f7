package web

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
)

// What a transcript shows of one entry. Every text here is plain text:
// the templates escape it (html/template), so a session holding markup
// shows it as text. The one exception is an image's data: URI
// (template.URL), made only of a known raster image type and base64
// characters checked here.

// entryItem is one entry of a transcript.
type entryItem struct {
	ID     string
	Parent string
	Kind   string // CSS class: user, assistant, tool, bash, custom, summary, compaction, note, other
	Head   string
	Meta   string
	Time   string
	Label  string
	Blocks []block
	Leaf   bool
	Forks  int // children, when more than one: a branch point
	Full   string
}

// entryCtx is what the entry template is given: the entry, and what its
// acts menu needs (no menu when Acts.Fork is empty: AgentUse).
type entryCtx struct {
	E    entryItem
	Acts actURLs
	CSRF string
	Self string
}

// block is one part of an entry: a text, a collapsible text (thinking, a
// tool call or result), a tool call shown by its arguments (a command,
// a read, an edit's diff), an image or a note.
type block struct {
	Kind    string // text, thinking, call, cmd, read, diff, result, image, note, pre
	Summary string // the line a collapsed block shows; a cmd's or read's detail
	Text    string
	Cut     string // how much of Text (or Lines) was left out, when it was cut
	Img     template.URL
	Open    bool
	Err     bool
	Tool    string     // the tool of a cmd, read, diff or write call
	Path    string     // the file a read, write or edit names
	Lines   []diffLine // a diff's lines
}

// maxBlock is the most of one text a page shows; the entry's own page
// (Full) shows it whole.
const maxBlock = 64 << 10

// entryView describes en (whose bytes are there) for a transcript.
func entryView(en *jsonl.Entry, label string, hasLabel bool) entryItem {
	it := entryItem{ID: en.ID, Parent: en.ParentID, Kind: "other", Head: en.Type}
	if hasLabel {
		it.Label = label
	}
	if t, ok := entryTime(en); ok {
		it.Time = t.Local().Format("2006-01-02 15:04:05")
	}
	str := func(k string) string { s, _ := en.StringField(k); return s }
	switch en.Type {
	case jsonl.TypeMessage:
		messageView(&it, en)
	case jsonl.TypeCompaction:
		it.Kind, it.Head = "compaction", "compaction"
		if v, ok := en.Field("tokensBefore"); ok {
			if n, ok := jsonl.Number(v); ok {
				it.Meta = strconv.FormatFloat(n, 'f', -1, 64) + " tokens before"
			}
		}
		it.Blocks = append(it.Blocks, collapsible("summary", str("summary"), false))
		if k := str("firstKeptEntryId"); k != "" {
			it.Blocks = append(it.Blocks, block{Kind: "note", Text: "kept from entry " + k})
		}
	case jsonl.TypeBranchSummary:
		it.Kind, it.Head = "summary", "branch summary"
		if from := str("fromId"); from != "" {
			it.Meta = "from " + from
		}
		it.Blocks = append(it.Blocks, textBlock(str("summary")))
	case jsonl.TypeModelChange:
		it.Kind, it.Head = "note", "model"
		it.Blocks = append(it.Blocks, block{Kind: "note", Text: stats.ModelName(str("provider"), str("modelId"))})
	case jsonl.TypeThinkingLevelChange:
		it.Kind, it.Head = "note", "thinking level"
		it.Blocks = append(it.Blocks, block{Kind: "note", Text: str("thinkingLevel")})
	case jsonl.TypeLabel:
		it.Kind, it.Head = "note", "label"
		if l, ok := en.StringField("label"); ok && l != "" {
			it.Blocks = append(it.Blocks, block{Kind: "note", Text: human.Quote(l) + " on " + str("targetId")})
		} else {
			it.Blocks = append(it.Blocks, block{Kind: "note", Text: "label of " + str("targetId") + " cleared"})
		}
	case jsonl.TypeSessionInfo:
		it.Kind, it.Head = "note", "name"
		if n := strings.TrimSpace(str("name")); n != "" {
			it.Blocks = append(it.Blocks, block{Kind: "note", Text: n})
		} else {
			it.Blocks = append(it.Blocks, block{Kind: "note", Text: "name cleared"})
		}
	case jsonl.TypeCustomMessage:
		it.Kind, it.Head = "custom", "custom message · "+str("customType")
		if v, ok := en.Field("display"); ok && string(v) == "false" {
			it.Meta = "not displayed in pi"
		}
		if v, ok := en.Field("content"); ok {
			it.Blocks = append(it.Blocks, contentBlocks(v)...)
		}
	case jsonl.TypeCustom:
		it.Kind, it.Head = "note", "custom · "+str("customType")
		if v, ok := en.Field("data"); ok {
			it.Blocks = append(it.Blocks, collapsible("data", indentJSON(v), false))
		}
	case jsonl.TypeUsage:
		it.Kind, it.Head = "note", "usage · "+str("kind")
		u, _ := en.Field("usage")
		us := stats.ReadUsage(u)
		it.Blocks = append(it.Blocks, block{Kind: "note", Text: fmt.Sprintf("%s: %d tokens %s", stats.ModelName(str("provider"), str("model")), us.TotalTokens, human.Cost(us.Cost.Total))})
	case jsonl.TypeContextEdit:
		it.Kind, it.Head = "note", "context edit"
		it.Blocks = append(it.Blocks, block{Kind: "note", Text: str("targetId") + " " + strings.TrimSuffix(contextEditHow(en), " by "+en.ID)})
		if v, ok := en.Field("replacement"); ok && string(v) != "null" {
			if c, ok := jsonl.Lookup(v, "content"); ok {
				it.Blocks = append(it.Blocks, contentBlocks(c)...)
			}
		}
	default:
		it.Blocks = append(it.Blocks, collapsible("entry", indentJSON(en.Raw), false))
	}
	return it
}

// contextEditHow is how a context_edit changes its target in the model
// context: "omitted from the model context by ID" or "replaced in ...".
func contextEditHow(en *jsonl.Entry) string {
	how := "replaced in"
	if v, ok := en.Field("replacement"); ok && string(v) == "null" {
		how = "omitted from"
	}
	return how + " the model context by " + en.ID
}

// messageView fills in a message entry.
func messageView(it *entryItem, en *jsonl.Entry) {
	raw := en.Message()
	m, err := message.Decode(raw)
	if err != nil || raw == nil {
		it.Head = "message"
		it.Blocks = append(it.Blocks, collapsible("message", indentJSON(raw), false))
		return
	}
	switch m := m.(type) {
	case *message.User:
		it.Kind, it.Head = "user", "user"
		it.Blocks = contentOf(m.Content)
	case *message.Assistant:
		it.Kind, it.Head = "assistant", "assistant"
		meta := []string{stats.ModelName(m.Provider, m.Model)}
		u := m.Usage
		if u.TotalTokens > 0 || u.Input > 0 || u.Output > 0 {
			meta = append(meta, human.Plural(int(u.TotalTokens), "token", "tokens"))
		}
		if u.Cost.Total > 0 {
			meta = append(meta, human.Cost(u.Cost.Total))
		}
		if m.StopReason != "" && m.StopReason != message.StopStop && m.StopReason != message.StopToolUse {
			meta = append(meta, "stop: "+string(m.StopReason))
		}
		it.Meta = strings.Join(meta, " · ")
		for _, b := range m.Content {
			it.Blocks = append(it.Blocks, assistantBlock(b))
		}
		if m.ErrorMessage != "" {
			it.Blocks = append(it.Blocks, block{Kind: "note", Err: true, Text: "error: " + m.ErrorMessage})
		}
	case *message.ToolResult:
		it.Kind, it.Head = "tool", "tool result · "+m.ToolName
		text, imgs := blocksText(m.Content)
		b := collapsible("result", text, false)
		b.Kind, b.Err = "result", m.IsError
		if m.IsError {
			it.Meta = "error"
		}
		it.Blocks = append(it.Blocks, b)
		it.Blocks = append(it.Blocks, imgs...)
	case *message.BashExecution:
		it.Kind, it.Head = "bash", "bash"
		meta := []string{}
		if m.HasExitCode {
			meta = append(meta, "exit "+strconv.FormatInt(m.ExitCode, 10))
		}
		if m.Cancelled {
			meta = append(meta, "cancelled")
		}
		if m.Truncated {
			meta = append(meta, "output truncated")
		}
		it.Meta = strings.Join(meta, " · ")
		it.Blocks = append(it.Blocks, block{Kind: "text", Text: "$ " + m.Command})
		b := collapsible("output", m.Output, false)
		b.Kind = "result"
		it.Blocks = append(it.Blocks, b)
	case *message.Custom:
		it.Kind, it.Head = "custom", "custom · "+m.CustomType
		if !m.Display {
			it.Meta = "not displayed in pi"
		}
		it.Blocks = contentOf(m.Content)
	case *message.BranchSummary:
		it.Kind, it.Head = "summary", "branch summary"
		it.Blocks = []block{textBlock(m.Summary)}
	case *message.CompactionSummary:
		it.Kind, it.Head = "compaction", "compaction summary"
		it.Blocks = []block{collapsible("summary", m.Summary, false)}
	default:
		it.Head = "message · " + en.Role
		it.Blocks = append(it.Blocks, collapsible("message", indentJSON(raw), false))
	}
}

// assistantBlock shows one block of an assistant message.
func assistantBlock(b message.Block) block {
	switch b := b.(type) {
	case *message.TextContent:
		return textBlock(b.Text)
	case *message.ThinkingContent:
		if b.Redacted {
			return block{Kind: "note", Text: "thinking (redacted by the provider)"}
		}
		x := collapsible("thinking", b.Thinking, false)
		x.Kind = "thinking"
		return x
	case *message.ToolCall:
		args, _ := json.Marshal(b.Arguments)
		if raw, ok := b.Arguments.(json.RawMessage); ok {
			args = raw
		}
		if x, ok := toolCallBlock(b.Name, args); ok {
			return x
		}
		x := collapsible("call", indentJSON(args), false)
		x.Kind = "call"
		x.Summary = "→ " + b.Name + " " + human.OneLine(string(args), 160)
		return x
	case *message.ImageContent:
		return imageBlock(b)
	case *message.UnknownBlock:
		return collapsible("block", indentJSON(b.Raw), false)
	}
	return block{Kind: "note", Text: "(an unknown block)"}
}

// contentOf shows a user or custom message's content.
func contentOf(c message.Content) []block {
	if c.Blocks == nil {
		return []block{textBlock(c.Text)}
	}
	var out []block
	for _, b := range c.Blocks {
		out = append(out, assistantBlock(b))
	}
	return out
}

// contentBlocks shows a content member given as JSON (a string or an
// array of blocks).
func contentBlocks(v []byte) []block {
	if s, ok := jsonl.String(v); ok {
		return []block{textBlock(s)}
	}
	var out []block
	_ = jsonl.Elements(v, func(el []byte) bool {
		out = append(out, assistantBlock(message.DecodeBlock(el)))
		return true
	})
	return out
}

// blocksText joins the texts of a tool result and shows its images.
func blocksText(bs []message.Block) (string, []block) {
	var texts []string
	var imgs []block
	for _, b := range bs {
		switch b := b.(type) {
		case *message.TextContent:
			texts = append(texts, b.Text)
		case *message.ImageContent:
			imgs = append(imgs, imageBlock(b))
		case *message.UnknownBlock:
			texts = append(texts, string(b.Raw))
		}
	}
	return strings.Join(texts, "\n"), imgs
}

// textBlock is a text shown whole, up to maxBlock.
func textBlock(s string) block {
	b := block{Kind: "text"}
	b.Text, b.Cut = cut(s)
	return b
}

// collapsible is a text shown folded: its first line, and the rest on
// demand.
func collapsible(kind, s string, open bool) block {
	b := block{Kind: "pre", Open: open}
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	b.Summary = kind + ": " + human.OneLine(first, 140)
	if n > 1 {
		b.Summary += " (" + human.Plural(n, "line", "lines") + ")"
	}
	b.Text, b.Cut = cut(s)
	return b
}

// cut returns s up to maxBlock bytes (at a character boundary) and how
// much was left out.
func cut(s string) (string, string) {
	if len(s) <= maxBlock {
		return s, ""
	}
	i := maxBlock
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i], human.Bytes(len(s)-i) + " more"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// imageTypes are the image types a page embeds (raster formats only: an
// SVG can hold scripts).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageBlock embeds an image when its type is a raster one and its data
// is base64 of at most 8 MB; otherwise it says what it is.
func imageBlock(im *message.ImageContent) block {
	note := block{Kind: "note", Text: "image " + im.MimeType + ", " + human.Bytes(len(im.Data)*3/4)}
	if !imageTypes[im.MimeType] || len(im.Data) > 8<<20 || !isBase64(im.Data) {
		return note
	}
	if _, err := base64.StdEncoding.DecodeString(im.Data); err != nil {
		return note
	}
	return block{Kind: "image", Text: note.Text, Img: template.URL("data:" + im.MimeType + ";base64," + im.Data)}
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// indentJSON indents JSON text for reading; other bytes are shown as
// they are.
func indentJSON(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	if out, err := jsonl.Indent(nil, v); err == nil {
		return string(out)
	}
	return string(v)
}

// clock formats a time for the pages: local, to the second.
func clock(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }
