package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

var exportCommand = &command{
	name:    "export",
	summary: "export the active branch as Markdown, JSON or HTML",
	usage: `
Usage: sessctl export [--format md|json|html] [--redact] [--leaf ID]
                      [-o FILE [--force]] SESSION

Writes the active branch of a session (root to leaf, or to --leaf ID, a
full id or a unique prefix) as a document, on stdout or into FILE. FILE
is written whole or not at all (a temporary file beside it, mode 0600,
renamed into place). Its directory must exist. An existing FILE is
replaced only with --force, and never, even then, when it is a session
file (the one exported, or any file whose first line is a session
header), a directory, a symbolic link, a device, a named pipe or a
socket. The document is streamed, so a large session is not held twice.

  md    Markdown: a title and the session's details, then one section per
        message. Thinking is in a collapsible <details> block, a tool call
        is its name and its arguments as a JSON block, a tool result is a
        code block; compaction and branch summaries, custom messages and
        model or thinking level changes are marked. Images are noted, not
        embedded.
  html  One self-contained page: inline CSS, no scripts, nothing loaded
        from anywhere (a Content-Security-Policy forbids it); images are
        embedded as data: URIs. Every text is HTML-escaped.
  json  One object:
          {"format": "sessctl-export/1", "path": FILE, "header": HEADER,
           "name": NAME, "leaf": ID, "messages": [ITEM...]}
        HEADER is the stored header object; NAME and ID are null when
        absent. Each ITEM is {"id": ENTRY_ID, "type": ENTRY_TYPE,
        "timestamp": ISO, "label": LABEL (only when labelled), "message":
        MSG}, one per entry of the branch that carries conversation: a
        message entry's stored message; a custom_message as {"role":
        "custom", ...}; a branch_summary as {"role": "branchSummary", ...}
        (skipped when empty) and a compaction as {"role":
        "compactionSummary", ...}, the shapes pi's buildSessionContext
        gives them. Model and thinking level changes, labels, names and
        custom entries are not messages and are left out.

--redact masks likely secrets in the content of the output (message
text, tool arguments and results, summaries, custom data, the session's
name, labels). It leaves alone image data and what describes the file:
its path, the header's id, time, working directory and parent session,
and the entries' types, ids, parent ids and times. What is masked,
replaced by [REDACTED]:

  - private keys: "-----BEGIN ... PRIVATE KEY-----" blocks (the body; the
    BEGIN and END lines stay), to the end of the text when unterminated;
  - assignments: the value after password, passwd, secret, token, apikey,
    api_key, api-key, access_key, private_key (any case, with any prefix
    and one "_word" suffix, so GITHUB_TOKEN and SECRET_KEY count) followed
    by = or :, quoted or not ("password": "x", token=abc, SECRET_KEY: x);
  - "Bearer <token>" (the token, when it has a digit or symbol);
  - API key shapes: sk-... (OpenAI, Anthropic), ghp_/gho_/ghu_/ghs_/ghr_...
    and github_pat_... (GitHub), xoxa-/xoxb-/xoxp-/xoxo-/xoxr-/xoxs-...
    (Slack), AKIA/ASIA + 16 (AWS access key ids), AIza + 35 (Google);
  - long high-entropy tokens: runs of 32 or more of [A-Za-z0-9+/_=-] that
    mix upper case, lower case and digits with at least 4.5 bits of
    entropy per character (hex digests, UUIDs and paths are left alone;
    a path is judged one component at a time).

Redaction is a safety net, not a guarantee: read the export before sharing
it.

The file is opened read-only. SESSION is a file path, a session id or a
unique id prefix (see --store).

Examples:
  sessctl export 390d8e15 > session.md
  sessctl export --format html --redact -o share.html 390d8e15
  sessctl export --format json session.jsonl | jq '.messages[].message.role'
`,
}

func init() { register(exportCommand).run = runExport }

func runExport(e *env, args []string) int {
	fs := e.flags(exportCommand)
	store := storeFlag(fs)
	format := fs.String("format", "md", "output `FORMAT`: md, json or html")
	redact := fs.Bool("redact", false, "mask likely secrets (API keys, tokens, passwords, private keys)")
	leaf := fs.String("leaf", "", "export the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	out := fs.String("o", "", "write to `FILE` instead of stdout (its directory must exist)")
	force := fs.Bool("force", false, "let -o replace an existing file (never a session file, a link or a special file)")
	pos, code := e.parseArgs(exportCommand, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(pos[0]); code >= 0 {
		return code
	}
	switch *format {
	case "md", "markdown", "json", "html":
	default:
		return e.usageError("unknown format %q: use md, json or html", *format)
	}
	toFile := *out != "" && *out != "-"
	if *force && !toFile {
		return e.usageError("--force needs -o FILE")
	}
	sv, err := openView(e, *store, pos[0])
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	path, err := sv.branch(*leaf)
	if err != nil {
		return e.fail(err)
	}
	var dst io.Writer = e.stdout
	var of *outputFile
	if toFile {
		if of, err = createOutput(*out, sv.path, *force); err != nil {
			return e.fail(err)
		}
		dst = of
	}
	// The document streams out: a large session is never held twice.
	w := bufio.NewWriterSize(dst, 1<<16)
	doc := newExportDoc(sv, path, *redact)
	switch *format {
	case "md", "markdown":
		doc.markdown(w)
	case "html":
		doc.html(w)
	case "json":
		err = doc.json(w)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if of != nil {
		if err != nil {
			of.abort()
			return e.fail(err)
		}
		if err := of.commit(); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	if err != nil {
		return e.fail(err)
	}
	return exitOK
}

// exportDoc is the branch to export, redacted when asked.
type exportDoc struct {
	sv      *sessionView
	file    string
	path    []*jsonl.Entry // as stored; view redacts an entry when asked
	redact  bool
	header  rview
	name    string
	hasName bool
	labels  map[string]string
}

func newExportDoc(sv *sessionView, path []*jsonl.Entry, redact bool) *exportDoc {
	d := &exportDoc{sv: sv, file: sv.path, path: path, redact: redact, header: rview(sv.header.Raw), name: sv.name, hasName: sv.hasName, labels: map[string]string{}}
	for _, en := range path {
		if l, ok := sv.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
			d.labels[en.ID] = l
		}
	}
	if !redact {
		return d
	}
	// Paths, ids and times are not secrets; masking them only breaks the
	// export (a store path once came out as "<dir>/.[REDACTED].jsonl").
	d.header = rview(redactMembers(nil, sv.header.Raw, headerKeep))
	d.name = redactString(d.name)
	for k, l := range d.labels {
		d.labels[k] = redactString(l)
	}
	return d
}

// view returns an entry of the branch as the export shows it: redacted
// when asked (one at a time, so a large session is not copied whole).
func (d *exportDoc) view(en *jsonl.Entry) *jsonl.Entry {
	if !d.redact {
		return en
	}
	red, err := jsonl.ParseEntry(redactMembers(nil, en.Raw, entryKeep))
	if err != nil {
		return en // cannot happen: redactJSON keeps the JSON valid
	}
	red.Line, red.Offset = en.Line, en.Offset
	return &red
}

// title is the session name, else the first user message, else the id.
func (d *exportDoc) title() string {
	if d.hasName && strings.TrimSpace(d.name) != "" {
		return oneLine(d.name, 80)
	}
	for _, en := range d.path {
		if en.Type == jsonl.TypeMessage && msgOf(en).s("role") == "user" {
			en = d.view(en)
			if t := oneLine(contentText(msgOf(en).get("content")), 80); t != "" {
				return t
			}
		}
	}
	return "Session " + d.header.s("id")
}

func (d *exportDoc) leafID() (string, bool) {
	if len(d.path) == 0 {
		return "", false
	}
	last := d.path[len(d.path)-1]
	return jsonl.KeyString(last.ID), last.IDKind != jsonl.KindAbsent
}

// details are the session's facts, in order, for both document formats.
func (d *exportDoc) details() [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("Session", d.header.s("id"))
	if d.hasName {
		add("Name", d.name)
	}
	add("Working directory", d.header.s("cwd"))
	add("Created", d.header.s("timestamp"))
	add("Parent session", d.header.s("parentSession"))
	leaf, _ := d.leafID()
	add("Leaf", leaf)
	add("Entries", fmt.Sprintf("%d on this branch, %d in the file", len(d.path), len(d.sv.entries)))
	return out
}

// ---- JSON ----

// json writes the export object indented by two spaces, one message at a
// time: the object without its messages first, then each item indented
// in place, so the output is byte for byte what indenting the whole
// object would give.
func (d *exportDoc) json(w *bufio.Writer) error {
	b := jsonl.NewObject(1<<12).
		String("format", "sessctl-export/1").
		String("path", d.file).
		Raw("header", d.header)
	if d.hasName {
		b.String("name", d.name)
	} else {
		b.Null("name")
	}
	if leaf, ok := d.leafID(); ok {
		b.String("leaf", leaf)
	} else {
		b.Null("leaf")
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("format export: %w", err)
	}
	head := bytes.TrimSuffix(buf.Bytes(), []byte("\n}"))
	w.Write(head)
	w.WriteString(",\n  \"messages\": [")
	n := 0
	for _, raw := range d.path {
		en := d.view(raw)
		m := exportMessage(en)
		if m == nil {
			continue
		}
		item := jsonl.NewObject(len(m) + 128)
		if id, ok := en.IDJSON(); ok {
			item.Raw("id", id)
		} else {
			item.Null("id")
		}
		item.String("type", en.Type).String("timestamp", en.Timestamp)
		if l, ok := d.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
			item.String("label", l)
		}
		item.Raw("message", m)
		if n > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		buf.Reset()
		if err := json.Indent(&buf, item.Bytes(), "    ", "  "); err != nil {
			return fmt.Errorf("format export: %w", err)
		}
		w.Write(buf.Bytes())
		n++
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return nil
}

// exportMessage converts one entry as pi's buildSessionContext converts
// path entries, with a compaction giving its compactionSummary in place;
// nil for entries that carry no message.
func exportMessage(en *jsonl.Entry) []byte {
	switch en.Type {
	case jsonl.TypeMessage:
		m, ok := en.Field("message")
		if !ok {
			return []byte("null")
		}
		return m
	case jsonl.TypeCustomMessage:
		b := jsonl.NewObject(256).String("role", "custom")
		for _, k := range []string{"customType", "content", "display", "details"} {
			if v, ok := en.Field(k); ok {
				b.Raw(k, v)
			}
		}
		return exportTime(b, en).Bytes()
	case jsonl.TypeBranchSummary:
		s := entryField(en, "summary")
		if s.str() == "" {
			return nil
		}
		b := jsonl.NewObject(len(s)+64).String("role", "branchSummary").Raw("summary", s)
		if v, ok := en.Field("fromId"); ok {
			b.Raw("fromId", v)
		}
		return exportTime(b, en).Bytes()
	case jsonl.TypeCompaction:
		b := jsonl.NewObject(256).String("role", "compactionSummary")
		for _, k := range []string{"summary", "tokensBefore"} {
			if v, ok := en.Field(k); ok {
				b.Raw(k, v)
			}
		}
		return exportTime(b, en).Bytes()
	}
	return nil
}

func exportTime(b *jsonl.ObjectBuilder, en *jsonl.Entry) *jsonl.ObjectBuilder {
	if ms, ok := jsonl.ParseDate(en.Timestamp); ok {
		return b.Number("timestamp", ms)
	}
	return b.Null("timestamp")
}

// ---- Markdown ----

type mdWriter struct {
	w *bufio.Writer
	d *exportDoc
}

func (d *exportDoc) markdown(w *bufio.Writer) {
	m := &mdWriter{w: w, d: d}
	fmt.Fprintf(w, "# %s\n\n", mdLine(d.title()))
	for _, kv := range d.details() {
		v := mdLine(kv[1])
		switch kv[0] {
		case "Session", "Working directory", "Parent session", "Leaf":
			v = mdCode(v)
		}
		fmt.Fprintf(w, "- **%s:** %s\n", kv[0], v)
	}
	w.WriteString("\n---\n\n")
	for _, en := range d.path {
		m.entry(d.view(en))
	}
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

// mdBlock is s as a fenced code block.
func mdBlock(lang, s string) string {
	n := longestRun(s, '`') + 1
	if n < 3 {
		n = 3
	}
	fence := strings.Repeat("`", n)
	s = strings.TrimRight(s, "\n")
	return fence + lang + "\n" + s + "\n" + fence + "\n"
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
	parts := []string{title}
	if en.IDKind != jsonl.KindAbsent {
		parts = append(parts, mdCode(jsonl.KeyString(en.ID)))
	}
	if en.Timestamp != "" {
		parts = append(parts, isoShort(en.Timestamp))
	}
	if l, ok := m.d.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		parts = append(parts, "label: "+mdCode(l))
	}
	fmt.Fprintf(m.w, "## %s\n\n", strings.Join(parts, " · "))
}

func (m *mdWriter) note(en *jsonl.Entry, text string) {
	fmt.Fprintf(m.w, "_%s_ (%s)\n\n", text, mdCode(jsonl.KeyString(en.ID)))
}

func (m *mdWriter) text(s string) {
	s = strings.TrimRight(s, "\n")
	if s != "" {
		fmt.Fprintf(m.w, "%s\n\n", s)
	}
}

func (m *mdWriter) entry(en *jsonl.Entry) {
	switch en.Type {
	case jsonl.TypeMessage:
		msg := msgOf(en)
		switch role := msg.s("role"); role {
		case "user":
			m.heading("User", en)
			m.content(msg.get("content"))
		case "assistant":
			title := "Assistant · " + mdLine(modelLabel(msg.s("provider"), msg.s("model")))
			m.heading(title, en)
			m.content(msg.get("content"))
			if u := msg.get("usage"); u.kind() == jsonl.KindObject {
				us := readUsage(u)
				fmt.Fprintf(m.w, "<sub>%d tokens (%d in, %d out, %d cache read, %d cache write), %s</sub>\n\n",
					us.TotalTokens, us.Input, us.Output, us.CacheRead, us.CacheWrite, fmtCost(us.Cost.Total))
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
			m.w.WriteString(mdBlock("", strings.Join(parts, "\n")) + "\n")
		case "bashExecution":
			m.heading("Shell command", en)
			m.w.WriteString(mdBlock("sh", "$ "+msg.s("command")) + "\n")
			m.w.WriteString(mdBlock("", msg.s("output")) + "\n")
			if c, ok := msg.get("exitCode").num(); ok {
				m.text(fmt.Sprintf("Exit code %v.", c))
			}
		case "custom":
			m.heading("Custom message · "+mdCode(msg.s("customType")), en)
			m.content(msg.get("content"))
		default:
			m.heading("Message · "+mdCode(firstNonEmpty(role, "no role")), en)
			if c := msg.get("content"); len(c) > 0 {
				m.content(c)
			} else {
				m.w.WriteString(mdBlock("json", indentJSON(msg)) + "\n")
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
		return "Model changed to " + code(modelLabel(entryField(en, "provider").str(), entryField(en, "modelId").str()))
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
	}
	return "Entry of type " + code(firstNonEmpty(en.Type, "none"))
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
			fmt.Fprintf(m.w, "<details>\n<summary>Thinking</summary>\n\n%s\n\n</details>\n\n", strings.TrimRight(b.text, "\n"))
		case "toolCall":
			fmt.Fprintf(m.w, "**Tool call:** %s", mdCode(b.name))
			if b.callID != "" {
				fmt.Fprintf(m.w, " (%s)", mdCode(b.callID))
			}
			m.w.WriteString("\n\n")
			m.w.WriteString(mdBlock("json", indentJSON(b.args)))
			m.w.WriteString("\n")
		case "image":
			m.text("_[image " + imageNote(b) + "]_")
		default:
			m.w.WriteString(mdBlock("json", indentJSON(b.raw)))
			m.w.WriteString("\n")
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

// ---- HTML ----

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
	d *exportDoc
}

var htmlEsc = html.EscapeString

func (d *exportDoc) html(w *bufio.Writer) {
	h := &htmlWriter{w: w, d: d}
	w.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n")
	w.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(w, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", htmlEsc(d.title()), exportCSS)
	fmt.Fprintf(w, "<header>\n<h1>%s</h1>\n<dl>\n", htmlEsc(d.title()))
	for _, kv := range d.details() {
		fmt.Fprintf(w, "<dt>%s</dt><dd>%s</dd>\n", htmlEsc(kv[0]), htmlEsc(kv[1]))
	}
	w.WriteString("</dl>\n</header>\n<main>\n")
	for _, en := range d.path {
		h.entry(d.view(en))
	}
	w.WriteString("</main>\n</body>\n</html>\n")
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
	h.w.WriteString("</div>\n")
}

func (h *htmlWriter) close() { h.w.WriteString("</section>\n") }

func (h *htmlWriter) text(s string) {
	s = strings.TrimRight(s, "\n")
	if s != "" {
		fmt.Fprintf(h.w, "<div class=\"text\">%s</div>\n", htmlEsc(s))
	}
}

func (h *htmlWriter) pre(s string) {
	fmt.Fprintf(h.w, "<pre>%s</pre>\n", htmlEsc(strings.TrimRight(s, "\n")))
}

func (h *htmlWriter) note(en *jsonl.Entry, text string) {
	fmt.Fprintf(h.w, "<p class=\"note\">%s <code>%s</code></p>\n", text, htmlEsc(jsonl.KeyString(en.ID)))
}

func (h *htmlWriter) entry(en *jsonl.Entry) {
	code := func(s string) string { return "<code>" + htmlEsc(s) + "</code>" }
	switch en.Type {
	case jsonl.TypeMessage:
		msg := msgOf(en)
		switch role := msg.s("role"); role {
		case "user":
			h.open("user", "User", en)
			h.content(msg.get("content"))
		case "assistant":
			h.open("assistant", "Assistant · "+htmlEsc(modelLabel(msg.s("provider"), msg.s("model"))), en)
			h.content(msg.get("content"))
			if u := msg.get("usage"); u.kind() == jsonl.KindObject {
				us := readUsage(u)
				fmt.Fprintf(h.w, "<p class=\"note\">%d tokens (%d in, %d out, %d cache read, %d cache write), %s</p>\n",
					us.TotalTokens, us.Input, us.Output, us.CacheRead, us.CacheWrite, htmlEsc(fmtCost(us.Cost.Total)))
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
			h.open("custom", "Message · "+code(firstNonEmpty(role, "no role")), en)
			if c := msg.get("content"); len(c) > 0 {
				h.content(c)
			} else {
				h.pre(indentJSON(msg))
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
			fmt.Fprintf(h.w, "<details><summary>Thinking</summary>\n<div class=\"text\">%s</div>\n</details>\n", htmlEsc(strings.TrimRight(b.text, "\n")))
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

var (
	imageMIME  = regexp.MustCompile(`^image/(png|jpeg|gif|webp|bmp)$`)
	base64Data = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)
)

// image embeds an image as a data: URI when its type and data are safe
// to embed, and notes it otherwise.
func (h *htmlWriter) image(b cblock) {
	if imageMIME.MatchString(b.mime) && base64Data.MatchString(b.data) && b.data != "" {
		fmt.Fprintf(h.w, "<p><img alt=\"%s\" src=\"data:%s;base64,%s\"></p>\n", htmlEsc("image "+imageNote(b)), b.mime, b.data)
		return
	}
	fmt.Fprintf(h.w, "<p class=\"note\">[image %s]</p>\n", htmlEsc(imageNote(b)))
}

// ---- redaction ----

// redactMark replaces a masked secret.
const redactMark = "[REDACTED]"

// redactRule masks one kind of secret; repl gets the submatches. The
// rule's regexp runs only on strings that contain one of its hints (in
// lower case), which keeps redaction of large sessions fast.
type redactRule struct {
	name  string
	hints []string
	re    *regexp.Regexp
	repl  func(m []string) string
}

var redactRules = []redactRule{
	{"private key", []string{"private key-----"},
		regexp.MustCompile(`(?s)(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
		func(m []string) string { return m[1] + redactMark + m[2] }},
	{"openai/anthropic key", []string{"sk-"}, regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), nil},
	{"github token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), nil},
	{"github fine-grained token", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), nil},
	{"slack token", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), nil},
	{"aws access key id", []string{"akia", "asia"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), nil},
	{"google api key", []string{"aiza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), nil},
}

// redactString masks every likely secret in s.
func redactString(s string) string {
	if s == "" {
		return s
	}
	lower := asciiLower(s)
	for _, r := range redactRules {
		hit := false
		for _, h := range r.hints {
			if strings.Contains(lower, h) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if r.repl == nil {
			s = r.re.ReplaceAllLiteralString(s, redactMark)
		} else {
			s = r.re.ReplaceAllStringFunc(s, func(match string) string {
				return r.repl(r.re.FindStringSubmatch(match))
			})
		}
		lower = asciiLower(s)
	}
	s = redactAssignments(s, lower)
	s = redactBearer(s)
	return redactEntropy(s)
}

// asciiLower lower-cases ASCII letters only, so indexes stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// assignmentNames are the secret names whose assigned value is masked.
var assignmentNames = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "access_key", "private_key"}

// span is a byte range of a string to replace with the mark.
type span struct{ from, to int }

// maskSpans replaces the given ranges (sorted by from, not overlapping
// after the first of any overlap) with the mark.
func maskSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.from < last {
			continue
		}
		b.WriteString(s[last:sp.from])
		b.WriteString(redactMark)
		last = sp.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactAssignments masks the value in NAME=VALUE and NAME: VALUE where
// NAME ends in one of assignmentNames, optionally followed by one _word
// suffix and a closing quote (GITHUB_TOKEN=x, "password": "x",
// SECRET_KEY: x). A quoted value keeps its quotes; an empty one is left.
func redactAssignments(s, lower string) string {
	var spans []span
	for _, name := range assignmentNames {
		for from := 0; ; {
			i := strings.Index(lower[from:], name)
			if i < 0 {
				break
			}
			i += from
			from = i + len(name)
			j := i + len(name)
			if j < len(s) && s[j] == '_' {
				k := j + 1
				for k < len(s) && isWordByte(s[k]) && s[k] != '_' {
					k++
				}
				if k > j+1 {
					j = k
				}
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				j++
			}
			for j < len(s) && isSpaceByte(s[j]) {
				j++
			}
			if j >= len(s) || (s[j] != ':' && s[j] != '=') {
				continue
			}
			j++
			for j < len(s) && isSpaceByte(s[j]) {
				j++
			}
			if j >= len(s) || strings.HasPrefix(s[j:], redactMark) {
				continue
			}
			if q := s[j]; q == '"' || q == '\'' {
				end := strings.IndexAny(s[j+1:], string(q)+"\n")
				if end <= 0 || s[j+1+end] != q {
					continue // empty, or no closing quote on the line
				}
				if v := s[j+1 : j+1+end]; !strings.HasPrefix(v, redactMark) {
					spans = append(spans, span{j + 1, j + 1 + end})
				}
				continue
			}
			k := j
			for k < len(s) && !strings.ContainsRune(" \t\r\n\"',;&)}]<>", rune(s[k])) {
				k++
			}
			if k > j {
				spans = append(spans, span{j, k})
			}
		}
	}
	return maskSpans(s, spans)
}

// bearerChar reports whether c can be part of a bearer token.
func bearerChar(c byte) bool {
	return isWordByte(c) || strings.IndexByte(".~+/=-", c) >= 0
}

// redactBearer masks the token after "Bearer " (any case) when it is at
// least 8 characters and has a digit or symbol, so prose is left alone.
func redactBearer(s string) string {
	lower := asciiLower(s)
	var spans []span
	for from := 0; ; {
		i := strings.Index(lower[from:], "bearer")
		if i < 0 {
			break
		}
		i += from
		from = i + len("bearer")
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		j := from
		for j < len(s) && (isSpaceByte(s[j]) || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		if j == from {
			continue
		}
		k := j
		for k < len(s) && bearerChar(s[k]) {
			k++
		}
		tok := s[j:k]
		if len(tok) >= 8 && strings.ContainsAny(tok, "0123456789._~+/=-") && !strings.Contains(tok, "REDACTED") {
			spans = append(spans, span{j, k})
		}
	}
	return maskSpans(s, spans)
}

// entropyChar reports whether c can be part of a high-entropy token.
func entropyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '_' || c == '=' || c == '-'
}

// redactEntropy masks runs of 32 or more token characters that look
// random (see highEntropy). A run that is part of a path (it starts with
// "/", or follows "." or "~", and has a "/" in it) is judged one path
// component at a time, so mixed-case directory and file names are left
// alone while a random component of 32 or more characters is still
// masked.
func redactEntropy(s string) string {
	var b strings.Builder
	last := 0
	mask := func(from, to int) {
		b.WriteString(s[last:from])
		b.WriteString(redactMark)
		last = to
	}
	for i := 0; i < len(s); {
		if !entropyChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && entropyChar(s[j]) {
			j++
		}
		if j-i >= 32 {
			pathLike := strings.IndexByte(s[i:j], '/') >= 0 &&
				(s[i] == '/' || i > 0 && (s[i-1] == '.' || s[i-1] == '~'))
			if !pathLike {
				if highEntropy(s[i:j]) {
					mask(i, j)
				}
			} else {
				for k := i; k < j; {
					end := strings.IndexByte(s[k:j], '/')
					if end < 0 {
						end = j
					} else {
						end += k
					}
					if end-k >= 32 && highEntropy(s[k:end]) {
						mask(k, end)
					}
					k = end + 1
				}
			}
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// highEntropy reports whether a token looks random: upper case, lower
// case and digits mixed, and at least 4.5 bits of entropy per character.
func highEntropy(s string) bool {
	var upper, lower, digit bool
	var counts [256]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		counts[c]++
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	if !upper || !lower || !digit {
		return false
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 4.5
}

// headerKeep and entryKeep are the top-level members of a header and of
// an entry that --redact leaves alone: the file's structure (types, ids,
// links, times) and its paths. Everything else is content and redacted.
var (
	headerKeep = map[string]bool{"type": true, "version": true, "id": true, "timestamp": true, "cwd": true, "parentSession": true}
	entryKeep  = map[string]bool{"type": true, "id": true, "parentId": true, "timestamp": true, "targetId": true, "firstKeptEntryId": true, "fromId": true}
)

// redactMembers appends the object v with every member redacted except
// those named in keep, which are copied as they are. A v that is not an
// object is redacted whole.
func redactMembers(dst, v []byte, keep map[string]bool) []byte {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return redactJSON(dst, v, 0)
	}
	dst = append(dst, '{')
	first := true
	_ = jsonl.Members(v, func(m *jsonl.Member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, '"', ':')
		if keep[m.KeyString()] {
			dst = append(dst, m.Value...)
		} else {
			dst = redactJSON(dst, m.Value, 1)
		}
		return true
	})
	return append(dst, '}')
}

// maxRedactDepth bounds the recursion of redactJSON; deeper values are
// kept as they are when nothing in their JSON text matches, and replaced
// whole by the mark (a string) when anything does.
const maxRedactDepth = 256

// redactJSON appends v with every string value redacted (keys are not),
// keeping key order and the raw bytes of whatever is unchanged. The data
// of image blocks ({"type":"image","data":...}) is kept.
func redactJSON(dst, v []byte, depth int) []byte {
	switch jsonl.KindOf(v) {
	case jsonl.KindString:
		s, ok := jsonl.String(v)
		if !ok {
			return append(dst, v...)
		}
		if r := redactString(s); r != s {
			return jsonl.AppendString(dst, r)
		}
		return append(dst, v...)
	case jsonl.KindObject, jsonl.KindArray:
	default:
		return append(dst, v...)
	}
	if depth >= maxRedactDepth {
		if redactString(string(v)) != string(v) {
			return jsonl.AppendString(dst, redactMark)
		}
		return append(dst, v...)
	}
	if jsonl.KindOf(v) == jsonl.KindArray {
		dst = append(dst, '[')
		first := true
		_ = jsonl.Elements(v, func(el []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = redactJSON(dst, el, depth+1)
			return true
		})
		return append(dst, ']')
	}
	image := rview(v).s("type") == "image"
	dst = append(dst, '{')
	first := true
	_ = jsonl.Members(v, func(m *jsonl.Member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		key := m.KeyString()
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, '"')
		dst = append(dst, ':')
		if image && key == "data" {
			dst = append(dst, m.Value...)
		} else {
			dst = redactJSON(dst, m.Value, depth+1)
		}
		return true
	})
	return append(dst, '}')
}
