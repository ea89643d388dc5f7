package render

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
)

const exportCSS = `body{font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328;background:#fff}
h1{font-size:1.5rem}dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
section{border:1px solid #d0d7de;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
.meta{font-size:.85rem;color:#57606a;margin-bottom:.4rem}.meta .role{font-weight:600;color:#1f2328}
.user{background:#f6f8fa}.assistant{background:#fff}.tool{background:#fbfbfb}.summary{background:#fff8c5}.custom{background:#f0f6ff}
.note{font-size:.85rem;color:#57606a;margin:.5rem 0}.label{background:#ddf4ff;border-radius:4px;padding:0 .3rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere}pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
details{margin:.4rem 0}summary{cursor:pointer;color:#57606a}img{max-width:100%}code{font-size:.9em}.err{color:#cf222e}`

type htmlWriter struct {
	w *bufio.Writer
	d *doc
}

var htmlEsc = html.EscapeString

// htmlEscaper writes what htmlEsc returns (html.EscapeString's five
// replacements) straight to a writer, so that a long text is not copied
// into an escaped string first.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")

// escTo writes htmlEsc(s) to w.
func escTo(w *bufio.Writer, s string) { _, _ = htmlEscaper.WriteString(w, s) }

// HTML writes the branch of s (root first, redacted as opts asks) as one
// self-contained page: inline CSS, no scripts, nothing loaded from
// anywhere (a Content-Security-Policy forbids it); images are embedded as
// data: URIs when their type and data are safe to embed. Every text is
// HTML-escaped. The page is streamed: when HTML fails, part of it may
// have been written.
func HTML(w io.Writer, s *Session, branch []*engine.Entry, opts Options) error {
	return write(w, s, branch, opts, (*doc).html)
}

func (d *doc) html(w *bufio.Writer) error {
	h := &htmlWriter{w: w, d: d}
	title, err := d.title()
	if err != nil {
		return err
	}
	w.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n")
	w.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(w, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", htmlEsc(title), exportCSS)
	fmt.Fprintf(w, "<header>\n<h1>%s</h1>\n<dl>\n", htmlEsc(title))
	for _, kv := range d.details() {
		fmt.Fprintf(w, "<dt>%s</dt><dd>%s</dd>\n", htmlEsc(kv[0]), htmlEsc(kv[1]))
	}
	w.WriteString("</dl>\n</header>\n<main>\n")
	err = d.s.each(d.path, func(raw *jsonl.Entry) error {
		en, err := d.view(raw)
		if err != nil {
			return err
		}
		h.entry(en)
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteString("</main>\n</body>\n</html>\n")
	return nil
}

func (h *htmlWriter) open(class, title string, en *jsonl.Entry) {
	fmt.Fprintf(h.w, "<section class=\"%s\"", htmlEsc(class))
	if en.IDKind == jsonl.KindString {
		fmt.Fprintf(h.w, " id=\"entry-%s\"", htmlEsc(en.ID))
	}
	fmt.Fprintf(h.w, ">\n<div class=\"meta\"><span class=\"role\">%s</span>", title)
	if en.IDKind != jsonl.KindAbsent {
		fmt.Fprintf(h.w, " <code>%s</code>", htmlEsc(jsonl.KeyString(en.ID)))
	}
	if en.Timestamp != "" {
		fmt.Fprintf(h.w, " <time datetime=\"%s\">%s</time>", htmlEsc(en.Timestamp), htmlEsc(isoShort(en.Timestamp)))
	}
	if l, ok := h.d.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		fmt.Fprintf(h.w, " <span class=\"label\">%s</span>", htmlEsc(l))
	}
	if e, ok := h.d.edits[en.ID]; ok && en.IDKind == jsonl.KindString {
		fmt.Fprintf(h.w, " <span class=\"edited\">%s</span>", e.text(func(s string) string { return "<code>" + htmlEsc(s) + "</code>" }))
	}
	h.w.WriteString("</div>\n")
}

func (h *htmlWriter) close() { h.w.WriteString("</section>\n") }

func (h *htmlWriter) text(s string) {
	s = strings.TrimRight(s, "\n")
	if s != "" {
		h.w.WriteString("<div class=\"text\">")
		escTo(h.w, s)
		h.w.WriteString("</div>\n")
	}
}

func (h *htmlWriter) pre(s string) {
	h.w.WriteString("<pre>")
	escTo(h.w, strings.TrimRight(s, "\n"))
	h.w.WriteString("</pre>\n")
}

func (h *htmlWriter) note(en *jsonl.Entry, text string) {
	fmt.Fprintf(h.w, "<p class=\"note\">%s <code>%s</code></p>\n", text, htmlEsc(jsonl.KeyString(en.ID)))
}

func (h *htmlWriter) entry(en *jsonl.Entry) {
	code := func(s string) string { return "<code>" + htmlEsc(s) + "</code>" }
	switch en.Type {
	case jsonl.TypeMessage:
		mv := msgOf(en)
		msg := mv.obj()
		switch role := msg.s("role"); role {
		case "user":
			h.open("user", "User", en)
			h.content(msg.get("content"))
		case "assistant":
			h.open("assistant", "Assistant · "+htmlEsc(stats.ModelName(msg.s("provider"), msg.s("model"))), en)
			h.content(msg.get("content"))
			if u := msg.get("usage"); u.kind() == jsonl.KindObject {
				us := stats.ReadUsage(u)
				fmt.Fprintf(h.w, "<p class=\"note\">%d tokens (%d in, %d out, %d cache read, %d cache write), %s</p>\n",
					us.TotalTokens, us.Input, us.Output, us.CacheRead, us.CacheWrite, htmlEsc(human.Cost(us.Cost.Total)))
			}
			if sr := msg.s("stopReason"); sr != "" && sr != "stop" && sr != "toolUse" {
				fmt.Fprintf(h.w, "<p class=\"err\">Stopped: %s</p>\n", htmlEsc(strings.TrimSpace(sr+" "+msg.s("errorMessage"))))
			}
		case "toolResult":
			title := "Tool result · " + code(msg.s("toolName"))
			if msg.get("isError").isTrue() {
				title += " · <span class=\"err\">error</span>"
			}
			h.open("tool", title, en)
			for _, b := range contentBlocks(msg.get("content")) {
				switch b.typ {
				case "text":
					h.pre(b.text)
				case "image":
					h.image(b)
				}
			}
		case "bashExecution":
			h.open("tool", "Shell command", en)
			h.pre("$ " + msg.s("command"))
			h.pre(msg.s("output"))
			if c, ok := msg.get("exitCode").num(); ok {
				fmt.Fprintf(h.w, "<p class=\"note\">Exit code %v.</p>\n", c)
			}
		case "custom":
			h.open("custom", "Custom message · "+code(msg.s("customType")), en)
			h.content(msg.get("content"))
		default:
			h.open("custom", "Message · "+code(human.Or(role, "no role")), en)
			if c := msg.get("content"); len(c) > 0 {
				h.content(c)
			} else {
				h.pre(indentJSON(mv))
			}
		}
		h.close()
	case jsonl.TypeCompaction:
		h.open("summary", "Compaction", en)
		tokens, _ := entryField(en, "tokensBefore").num()
		line := fmt.Sprintf("%v tokens summarised", tokens)
		if k := entryField(en, "firstKeptEntryId").str(); k != "" {
			line += "; kept from " + code(k)
		}
		fmt.Fprintf(h.w, "<p class=\"note\">%s</p>\n", line)
		h.text(entryField(en, "summary").str())
		h.close()
	case jsonl.TypeBranchSummary:
		h.open("summary", "Branch summary", en)
		if f := entryField(en, "fromId").str(); f != "" {
			fmt.Fprintf(h.w, "<p class=\"note\">Summary of the branch left at %s</p>\n", code(f))
		}
		h.text(entryField(en, "summary").str())
		h.close()
	case jsonl.TypeCustomMessage:
		title := "Custom message · " + code(entryField(en, "customType").str())
		if d := entryField(en, "display"); d.kind() == jsonl.KindBool && !d.isTrue() {
			title += " · hidden"
		}
		h.open("custom", title, en)
		h.content(entryField(en, "content"))
		h.close()
	default:
		h.note(en, noteText(en, code))
	}
}

func (h *htmlWriter) content(c rview) {
	for _, b := range contentBlocks(c) {
		switch b.typ {
		case "text":
			h.text(b.text)
		case "thinking":
			if b.redacted {
				h.w.WriteString("<details><summary>Thinking (redacted by the provider)</summary></details>\n")
				continue
			}
			h.w.WriteString("<details><summary>Thinking</summary>\n<div class=\"text\">")
			escTo(h.w, strings.TrimRight(b.text, "\n"))
			h.w.WriteString("</div>\n</details>\n")
		case "toolCall":
			fmt.Fprintf(h.w, "<p>Tool call <code>%s</code>", htmlEsc(b.name))
			if b.callID != "" {
				fmt.Fprintf(h.w, " <span class=\"note\">%s</span>", htmlEsc(b.callID))
			}
			h.w.WriteString("</p>\n")
			h.pre(indentJSON(b.args))
		case "image":
			h.image(b)
		default:
			h.pre(indentJSON(b.raw))
		}
	}
}

var imageMIME = regexp.MustCompile(`^image/(png|jpeg|gif|webp|bmp)$`)

// base64Data reports whether s matches ^[A-Za-z0-9+/]*={0,2}$: base64
// that is safe in a data: URI. A loop, not that regular expression: an
// image is some 100 KB, and the expression took a sixth of an HTML
// export's time.
func base64Data(s string) bool {
	for range 2 {
		s = strings.TrimSuffix(s, "=")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// image embeds an image as a data: URI when its type and data are safe
// to embed, and notes it otherwise.
func (h *htmlWriter) image(b cblock) {
	if data := b.data(); imageMIME.MatchString(b.mime) && base64Data(data) && data != "" {
		fmt.Fprintf(h.w, "<p><img alt=\"%s\" src=\"data:%s;base64,", htmlEsc("image "+imageNote(b)), b.mime)
		h.w.WriteString(data)
		h.w.WriteString("\"></p>\n")
		return
	}
	fmt.Fprintf(h.w, "<p class=\"note\">[image %s]</p>\n", htmlEsc(imageNote(b)))
}
