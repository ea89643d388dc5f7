package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

var showCommand = &command{
	name:    "show",
	summary: "print the active branch of a session as a readable transcript",
	usage: `
Usage: sessctl show [--leaf ID] [--full] [--json] SESSION
       sessctl show --store agentuse [--project DIR] [--full] [--json] SESSION

Prints the active branch of a session, root first, as a transcript: who
said what, the assistant's text, its tool calls and their results,
compaction and branch summaries, custom messages, and model and thinking
level changes as small notes. The active branch ends at the session's leaf
(its last entry, as pi sees it); --leaf ID shows the branch that ends at
another entry instead (a unique prefix of the id is enough).

Layout of the human output (times are UTC); notes start with "--",
summaries with "==", messages with their entry id:

  -- model anthropic/claude-sonnet-4-5 [e0000001]

  [a1b2c3d4] user  2026-03-01 09:00:02  (label: start)
      the message text

  [b2c3d4e5] assistant  anthropic/claude-sonnet-4-5  2026-03-01 09:00:03  160 tokens $0.000960
      thinking: the first line of the thinking... (+3 lines)
      the assistant's text
      -> bash {"command":"make test"}

  [c3d4e5f6] tool result bash  2026-03-01 09:00:04
      the first lines of the output
      ... 37 more lines

  == compaction [d4e5f6a7] 2026-03-01 09:10:00: 45000 tokens summarised, kept from a1b2c3d4
      the summary

Thinking is folded to one line and tool results to their first lines;
--full prints both, and tool arguments, in full. Any other text (a
message, a summary) longer than 200 lines or 32 KB is cut there, with a
note of how much was left out; --full prints it whole. On a terminal,
control characters in the session are shown escaped (\u001b), and paths
with a newline or another control character are quoted. Labels are shown next to
the entry they name, whichever branch the label entry is on.

--json prints the stored lines instead, as JSONL: the header line, then
every entry of the branch, root first, byte for byte as they are in the
file (a version 1 or 2 file is shown as migrated in memory). The output is
itself a loadable session file of that one branch.

The file is opened read-only: no lock is taken and nothing is written.
SESSION is a file path, a session id or a unique id prefix (see --store).

With --store agentuse (or when SESSION is an AgentUse session directory),
SESSION is an AgentUse session id or unique prefix in the project of DIR
(default: the working directory). AgentUse sessions are linear, so --leaf
does not apply; the transcript lists each message's parts, and --json
prints what 'sessctl dump --store agentuse' prints.

Examples:
  sessctl show 390d8e15
  sessctl show --full --leaf 1a2b session.jsonl | less
  sessctl show --json 390d8e15 > branch.jsonl
  sessctl show --store agentuse 01M7ZXJ0
`,
}

func init() { register(showCommand).run = runShow }

func runShow(e *env, args []string) int {
	fs := e.flags(showCommand)
	store := storeFlag(fs)
	leaf := fs.String("leaf", "", "show the branch ending at entry `ID` (or a unique prefix) instead of the leaf")
	full := fs.Bool("full", false, "print thinking, tool arguments and tool results in full")
	asJSON := fs.Bool("json", false, "print the header and the branch's stored lines as JSONL")
	au := addAgentUseFlags(fs, false)
	if code := e.parse(showCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return e.usageError("expected one SESSION")
	}
	if code := e.emptySession(fs.Arg(0)); code >= 0 {
		return code
	}
	if useAgentUse(*store, fs.Arg(0)) {
		if *leaf != "" {
			return e.usageError("--leaf does not apply to AgentUse sessions, which have no branches")
		}
		return runShowAgentUse(e, *au.project, fs.Arg(0), *full, *asJSON)
	}
	sv, err := openView(e, *store, fs.Arg(0))
	if err != nil {
		return e.fail(err)
	}
	defer sv.close()
	path, err := sv.branch(*leaf)
	if err != nil {
		return e.fail(err)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	if *asJSON {
		w.Write(sv.header.Raw)
		w.WriteByte('\n')
		for _, en := range path {
			w.Write(en.Raw)
			w.WriteByte('\n')
		}
	} else {
		writeTranscript(w, sv, path, *full)
	}
	if err := w.Flush(); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// ---- the session as the read commands see it ----

// sessionView is a session opened read-only, with what the read commands
// print about it.
type sessionView struct {
	path    string
	header  jsonl.Header
	id      string
	name    string
	hasName bool
	entries []*jsonl.Entry
	leaf    string // the leaf's id; "" when the leaf is null or undefined
	labels  map[string]string
	s       *engine.Session
}

// openView resolves and opens a session read-only and snapshots it,
// warning on stderr when the file is of a newer format version. The
// caller closes it.
func openView(e *env, store, arg string) (*sessionView, error) {
	path, err := resolveSession(store, arg)
	if err != nil {
		return nil, err
	}
	sv, err := openViewPath(e.ctx, path)
	if err != nil {
		return nil, err
	}
	e.warnVersion(sv.path, sv.header.Entry)
	return sv, nil
}

func openViewPath(ctx context.Context, path string) (*sessionView, error) {
	s, err := engine.Open(ctx, path, engine.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	sv := &sessionView{path: s.SessionFile(), header: s.Header(), s: s}
	sv.id = sv.header.ID
	sv.name, sv.hasName = s.Name()
	sv.entries = s.Entries()
	if id, ok := s.LeafID(); ok {
		sv.leaf = id
	}
	sv.labels = map[string]string{}
	for _, l := range s.Labels() {
		sv.labels[l.Target] = l.Label
	}
	return sv, nil
}

func (sv *sessionView) close() { _ = sv.s.Close() }

// branch returns the root-to-leaf path, or the path to the entry named by
// id (a full id or a unique prefix).
func (sv *sessionView) branch(id string) ([]*jsonl.Entry, error) {
	if id == "" {
		if sv.leaf == "" {
			return nil, nil
		}
		return sv.s.BranchPath(""), nil
	}
	full, err := sv.entryID(id)
	if err != nil {
		return nil, err
	}
	return sv.s.BranchPath(full), nil
}

// entryID resolves a full entry id or a unique prefix of one.
func (sv *sessionView) entryID(id string) (string, error) {
	if _, ok := sv.s.Entry(id); ok {
		return id, nil
	}
	var matches []string
	seen := map[string]bool{}
	for _, en := range sv.entries {
		if en.IDKind == jsonl.KindString && strings.HasPrefix(en.ID, id) && !seen[en.ID] {
			seen[en.ID] = true
			matches = append(matches, en.ID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("entry %q in %s: %w", id, sv.path, engine.ErrNotFound)
	}
	sort.Strings(matches)
	if len(matches) > 8 {
		matches = append(matches[:8], "...")
	}
	return "", fmt.Errorf("entry prefix %q matches %s: %w", id, strings.Join(matches, ", "), errAmbiguous)
}

// ---- raw JSON views ----

// rview is a raw JSON value seen through a few lenient accessors: a
// missing member, or a member of the wrong kind, reads as empty.
type rview []byte

func (v rview) get(key string) rview {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return nil
	}
	b, _ := jsonl.Lookup(v, key)
	return rview(b)
}

func (v rview) kind() jsonl.Kind { return jsonl.KindOf(v) }

func (v rview) str() string {
	s, _ := jsonl.String(v)
	return s
}

func (v rview) s(key string) string { return v.get(key).str() }

func (v rview) num() (float64, bool) {
	if v.kind() != jsonl.KindNumber {
		return 0, false
	}
	return jsonl.Number(v)
}

func (v rview) isTrue() bool { return len(v) == 4 && string(v) == "true" }

func (v rview) elems() []rview {
	if v.kind() != jsonl.KindArray {
		return nil
	}
	var out []rview
	_ = jsonl.Elements(v, func(el []byte) bool {
		out = append(out, rview(el))
		return true
	})
	return out
}

// compact returns the value as compact JSON text.
func (v rview) compact() string {
	if len(v) == 0 {
		return ""
	}
	b, err := jsonl.Canonical(nil, v)
	if err != nil {
		return string(v)
	}
	return string(b)
}

// cblock is one content block of a message.
type cblock struct {
	typ      string // text, thinking, toolCall, image, or the block's own type
	text     string // text, thinking
	redacted bool   // thinking: redacted by the provider
	name     string // toolCall
	callID   string // toolCall
	args     rview  // toolCall arguments
	mime     string // image
	data     string // image, base64
	raw      rview
}

// contentBlocks returns the content of a message: a string is one text block.
func contentBlocks(content rview) []cblock {
	switch content.kind() {
	case jsonl.KindString:
		return []cblock{{typ: "text", text: content.str(), raw: content}}
	case jsonl.KindArray:
	default:
		return nil
	}
	var out []cblock
	for _, el := range content.elems() {
		b := cblock{typ: el.s("type"), raw: el}
		switch b.typ {
		case "text":
			b.text = el.s("text")
		case "thinking":
			b.text = el.s("thinking")
			b.redacted = el.get("redacted").isTrue()
		case "toolCall":
			b.name = el.s("name")
			b.callID = el.s("id")
			b.args = el.get("arguments")
		case "image":
			b.mime = el.s("mimeType")
			b.data = el.s("data")
		}
		out = append(out, b)
	}
	return out
}

// textOf joins the text blocks of a content value.
func contentText(content rview) string {
	var parts []string
	for _, b := range contentBlocks(content) {
		if b.typ == "text" {
			parts = append(parts, b.text)
		}
	}
	return strings.Join(parts, "\n")
}

// message returns the message object of a message entry.
func msgOf(en *jsonl.Entry) rview {
	m, _ := en.Field("message")
	return rview(m)
}

// fieldOf returns a top-level member of an entry.
func entryField(en *jsonl.Entry, key string) rview {
	v, _ := en.Field(key)
	return rview(v)
}

// modelName returns "provider/model" of an assistant message.
func modelLabel(provider, model string) string {
	switch {
	case provider == "" && model == "":
		return "unknown"
	case provider == "":
		return model
	case model == "":
		return provider + "/?"
	}
	return provider + "/" + model
}

// shortTime turns an ISO timestamp into "2006-01-02 15:04:05" (UTC).
func isoShort(ts string) string {
	if len(ts) >= 19 && ts[10] == 'T' {
		return ts[:10] + " " + ts[11:19]
	}
	return ts
}

// imageNote describes an image block: its type and decoded size.
func imageNote(b cblock) string {
	n := len(b.data) * 3 / 4
	return fmt.Sprintf("%s, %s", firstNonEmpty(b.mime, "unknown type"), fmtBytes(n))
}

func fmtBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// cost formats a dollar amount.
func fmtCost(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 6, 64) }

// ---- transcript ----

const (
	maxBodyLines = 200      // lines of a text shown without --full
	maxBodyBytes = 32 << 10 // bytes of a text shown without --full
	foldLines    = 3        // tool result lines shown when folded
	foldWidth    = 160      // characters per folded line
	argsWidth    = 120      // characters of tool arguments when folded
	thinkWidth   = 100      // characters of folded thinking
	indentPrefix = "    "
)

// writeTranscript prints the path as show's human output.
func writeTranscript(w io.Writer, sv *sessionView, path []*jsonl.Entry, full bool) {
	tw := &transcript{w: w, sv: sv, full: full}
	tw.head(path)
	for _, en := range path {
		tw.entry(en)
	}
}

type transcript struct {
	w    io.Writer
	sv   *sessionView
	full bool
	note bool // the last thing printed was a one-line note
}

func (t *transcript) head(path []*jsonl.Entry) {
	sv := t.sv
	fmt.Fprintf(t.w, "Session  %s\n", quotePath(sv.id))
	if sv.hasName {
		fmt.Fprintf(t.w, "Name     %s\n", oneLine(sv.name, 100))
	}
	fmt.Fprintf(t.w, "File     %s\n", quotePath(sv.path))
	if sv.header.HasCwd {
		fmt.Fprintf(t.w, "Cwd      %s\n", quotePath(sv.header.Cwd))
	}
	if sv.header.HasParentSession {
		fmt.Fprintf(t.w, "Parent   %s\n", quotePath(sv.header.ParentSession))
	}
	if ts := sv.header.Timestamp; ts != "" {
		fmt.Fprintf(t.w, "Created  %s\n", isoShort(ts))
		if rec, ok := importRecordOf(sv.entries); ok && rec.DateFromFile() {
			fmt.Fprintf(t.w, "         (%s)\n", fileDateNote)
		}
	}
	if len(path) == 0 {
		fmt.Fprintf(t.w, "Branch   empty (%d entries in the file)\n", len(sv.entries))
		return
	}
	last := path[len(path)-1]
	fmt.Fprintf(t.w, "Branch   %d of %d entries, ending at %s\n", len(path), len(sv.entries), jsonl.KeyString(last.ID))
}

func (t *transcript) printf(format string, a ...any) { fmt.Fprintf(t.w, format, a...) }

// start begins an entry: blocks are set apart by a blank line, and runs
// of one-line notes stay together.
func (t *transcript) start(note bool) {
	if !note || !t.note {
		t.printf("\n")
	}
	t.note = note
}

// body prints text indented; fold > 0 keeps only that many lines, each
// cut to foldWidth. Without --full, any other text is cut after
// maxBodyLines lines or maxBodyBytes bytes, saying how much was left out:
// a 200 MB summary must not flood the terminal. Only the lines shown are
// split out of text.
func (t *transcript) body(text string, fold int) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	maxLines, maxBytes := 0, 0
	switch {
	case fold > 0:
		maxLines = fold
	case !t.full:
		maxLines, maxBytes = maxBodyLines, maxBodyBytes
	}
	shown := text
	if maxLines > 0 {
		shown = firstLines(shown, maxLines)
	}
	if maxBytes > 0 && len(shown) > maxBytes {
		shown = headBytes(shown, maxBytes)
	}
	for _, l := range strings.Split(shown, "\n") {
		l = strings.TrimRight(l, "\r \t")
		if fold > 0 {
			l = cutRunes(l, foldWidth)
		}
		if l == "" {
			t.printf("\n")
			continue
		}
		t.printf("%s%s\n", indentPrefix, l)
	}
	rest := strings.TrimPrefix(text[len(shown):], "\n")
	switch {
	case len(shown) == len(text):
	case fold > 0:
		t.printf("%s... %d more lines\n", indentPrefix, strings.Count(rest, "\n")+1)
	default:
		n := strings.Count(rest, "\n") + 1
		t.printf("%s[cut: %s more, in %d line%s; --full shows all]\n", indentPrefix, fmtBytes(len(rest)), n, pluralS(n))
	}
}

// firstLines returns the first n lines of s, without the newline after
// the last of them.
func firstLines(s string, n int) string {
	end := 0
	for i := 0; i < n; i++ {
		j := strings.IndexByte(s[end:], '\n')
		if j < 0 {
			return s
		}
		if i == n-1 {
			return s[:end+j]
		}
		end += j + 1
	}
	return s
}

// headBytes returns at most the first n bytes of s, cut at a rune
// boundary.
func headBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// shortLine is oneLine(s, n) for a text of any size: only its beginning
// is looked at.
func shortLine(s string, n int) string {
	return oneLine(headBytes(s, 8*n+64), n)
}

func (t *transcript) fold() int {
	if t.full {
		return 0
	}
	return foldLines
}

// label returns "  (label: x)" for a labelled entry.
func (t *transcript) label(en *jsonl.Entry) string {
	if l, ok := t.sv.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		return "  (label: " + oneLine(l, 60) + ")"
	}
	return ""
}

func (t *transcript) entry(en *jsonl.Entry) {
	id := jsonl.KeyString(en.ID)
	when := isoShort(en.Timestamp)
	switch en.Type {
	case jsonl.TypeMessage, jsonl.TypeCompaction, jsonl.TypeBranchSummary, jsonl.TypeCustomMessage:
		t.start(false)
	default:
		t.start(true)
	}
	switch en.Type {
	case jsonl.TypeMessage:
		t.message(en, id, when)
	case jsonl.TypeCompaction:
		tokens, _ := entryField(en, "tokensBefore").num()
		t.printf("== compaction [%s] %s: %s tokens summarised", id, when, strconv.FormatFloat(tokens, 'f', -1, 64))
		if k := entryField(en, "firstKeptEntryId").str(); k != "" {
			t.printf(", kept from %s", k)
		}
		t.printf("%s\n", t.label(en))
		t.body(entryField(en, "summary").str(), 0)
	case jsonl.TypeBranchSummary:
		t.printf("== branch summary [%s] %s", id, when)
		if f := entryField(en, "fromId").str(); f != "" {
			t.printf(", from %s", f)
		}
		t.printf("%s\n", t.label(en))
		t.body(entryField(en, "summary").str(), 0)
	case jsonl.TypeCustomMessage:
		t.printf("[%s] custom message %s  %s", id, entryField(en, "customType").str(), when)
		if d := entryField(en, "display"); d.kind() == jsonl.KindBool && !d.isTrue() {
			t.printf("  (hidden)")
		}
		t.printf("%s\n", t.label(en))
		t.content(entryField(en, "content"))
	case jsonl.TypeModelChange:
		t.printf("-- model %s [%s]%s\n", modelLabel(entryField(en, "provider").str(), entryField(en, "modelId").str()), id, t.label(en))
	case jsonl.TypeThinkingLevelChange:
		t.printf("-- thinking level %s [%s]%s\n", entryField(en, "thinkingLevel").str(), id, t.label(en))
	case jsonl.TypeLabel:
		target := entryField(en, "targetId").str()
		if l := entryField(en, "label").str(); l != "" {
			t.printf("-- label %s: %q [%s]\n", target, l, id)
		} else {
			t.printf("-- label %s cleared [%s]\n", target, id)
		}
	case jsonl.TypeSessionInfo:
		t.printf("-- name %q [%s]\n", entryField(en, "name").str(), id)
	case jsonl.TypeCustom:
		t.printf("-- custom %s [%s]%s\n", entryField(en, "customType").str(), id, t.label(en))
		if t.full {
			if d := entryField(en, "data"); len(d) > 0 {
				t.body(d.compact(), 0)
			}
		}
	default:
		t.printf("-- %s [%s]%s\n", firstNonEmpty(en.Type, "entry without a type"), id, t.label(en))
	}
}

func (t *transcript) message(en *jsonl.Entry, id, when string) {
	m := msgOf(en)
	role := m.s("role")
	switch role {
	case "user":
		t.printf("[%s] user  %s%s\n", id, when, t.label(en))
		t.content(m.get("content"))
	case "assistant":
		t.printf("[%s] assistant  %s  %s", id, modelLabel(m.s("provider"), m.s("model")), when)
		if u := m.get("usage"); u.kind() == jsonl.KindObject {
			us := readUsage(u)
			t.printf("  %d tokens %s", us.TotalTokens, fmtCost(us.Cost.Total))
		}
		t.printf("%s\n", t.label(en))
		t.content(m.get("content"))
		switch sr := m.s("stopReason"); sr {
		case "", "stop", "toolUse":
		default:
			msg := "stopped: " + sr
			if em := m.s("errorMessage"); em != "" {
				msg += ": " + em
			}
			t.printf("%s(%s)\n", indentPrefix, shortLine(msg, foldWidth))
		}
	case "toolResult":
		t.printf("[%s] tool result %s  %s", id, m.s("toolName"), when)
		if m.get("isError").isTrue() {
			t.printf("  (error)")
		}
		t.printf("%s\n", t.label(en))
		t.toolOutput(m.get("content"))
	case "bashExecution":
		t.printf("[%s] bash  %s%s\n", id, when, t.label(en))
		t.printf("%s$ %s\n", indentPrefix, shortLine(m.s("command"), foldWidth))
		t.body(m.s("output"), t.fold())
		var notes []string
		if c, ok := m.get("exitCode").num(); ok {
			notes = append(notes, "exit "+strconv.FormatFloat(c, 'f', -1, 64))
		}
		if m.get("cancelled").isTrue() {
			notes = append(notes, "cancelled")
		}
		if m.get("truncated").isTrue() {
			notes = append(notes, "truncated")
		}
		if m.get("excludeFromContext").isTrue() {
			notes = append(notes, "not sent to the model")
		}
		if len(notes) > 0 {
			t.printf("%s(%s)\n", indentPrefix, strings.Join(notes, ", "))
		}
	case "custom":
		t.printf("[%s] custom message %s  %s%s\n", id, m.s("customType"), when, t.label(en))
		t.content(m.get("content"))
	default:
		if role == "" {
			role = "message without a role"
		}
		t.printf("[%s] %s  %s%s\n", id, role, when, t.label(en))
		if c := m.get("content"); len(c) > 0 {
			t.content(c)
		} else if t.full {
			t.body(m.compact(), 0)
		}
	}
}

// content prints message content: text, thinking folded, tool calls on
// one line, images as a note.
func (t *transcript) content(c rview) {
	for _, b := range contentBlocks(c) {
		switch b.typ {
		case "text":
			t.body(b.text, 0)
		case "thinking":
			switch {
			case b.redacted:
				t.printf("%sthinking: (redacted by the provider)\n", indentPrefix)
			case t.full:
				t.printf("%sthinking:\n", indentPrefix)
				t.body(b.text, 0)
			default:
				text := strings.TrimSpace(b.text)
				lines := strings.Count(text, "\n")
				more := ""
				if lines > 0 {
					more = fmt.Sprintf(" (+%d lines)", lines)
				}
				t.printf("%sthinking: %s%s\n", indentPrefix, shortLine(firstLineOf(text), thinkWidth), more)
			}
		case "toolCall":
			args := b.args.compact()
			if !t.full {
				args = cutRunes(args, argsWidth)
			}
			t.printf("%s-> %s %s\n", indentPrefix, b.name, args)
		case "image":
			t.printf("%s[image %s]\n", indentPrefix, imageNote(b))
		default:
			t.printf("%s[%s block]\n", indentPrefix, firstNonEmpty(b.typ, "untyped"))
		}
	}
}

// toolOutput prints a tool result's content folded.
func (t *transcript) toolOutput(c rview) {
	var text []string
	for _, b := range contentBlocks(c) {
		switch b.typ {
		case "text":
			text = append(text, b.text)
		case "image":
			text = append(text, "[image "+imageNote(b)+"]")
		default:
			text = append(text, "["+firstNonEmpty(b.typ, "untyped")+" block]")
		}
	}
	t.body(strings.Join(text, "\n"), t.fold())
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cut shortens s to n runes, marking the cut. It looks at no more of s
// than it needs.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count, cut := 0, 0
	for i := range s {
		if count == n-3 {
			cut = i
		}
		if count == n {
			return s[:cut] + "..."
		}
		count++
	}
	return s
}
