package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

const (
	maxBodyLines = 200      // lines of a text shown unless Full
	maxBodyBytes = 32 << 10 // bytes of a text shown unless Full
	foldLines    = 3        // tool result lines shown when folded
	foldWidth    = 160      // characters per folded line
	argsWidth    = 120      // characters of tool arguments when folded
	thinkWidth   = 100      // characters of folded thinking
	indentPrefix = "    "
)

// TranscriptOptions configure Transcript.
type TranscriptOptions struct {
	// Full prints thinking, tool arguments and tool results, and every
	// long text, whole.
	Full bool
	// CutNote, when not empty, ends the marker that says how much of a
	// text was cut (how the reader sees it all, say).
	CutNote string
}

// Transcript writes the branch of s (root first) as a transcript for a
// terminal, the human output of 'sessctl show': a head with the session's
// details, then who said what, the assistant's text, its tool calls and
// their results, summaries, custom messages, and model and thinking level
// changes as one-line notes. Times are UTC. Thinking is folded to one line
// and tool results to their first lines, and any other text is cut after
// 200 lines or 32 KB, saying how much was left out; o.Full prints all of
// them whole. Paths with control characters are quoted; other text is
// written as it is (a terminal writer escapes what is left).
func Transcript(w io.Writer, s *Session, branch []*engine.Entry, o TranscriptOptions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	tw := &transcript{w: bw, sv: s, full: o.Full, cutNote: o.CutNote}
	tw.head(branch)
	// pi 1.x's context edits come after the messages they edit: find
	// them first, so that an edited message says so where it is shown.
	var edits []*jsonl.Entry
	for _, en := range branch {
		if en.Type == jsonl.TypeContextEdit {
			edits = append(edits, en)
		}
	}
	if len(edits) > 0 {
		tw.edits = map[string]string{}
		if err := s.each(edits, func(en *jsonl.Entry) error {
			how := "replaced in"
			if entryField(en, "replacement").kind() == jsonl.KindNull {
				how = "omitted from"
			}
			tw.edits[entryField(en, "targetId").str()] = "  (" + how + " the model context by " + jsonl.KeyString(en.ID) + ")"
			return nil
		}); err != nil {
			return err
		}
	}
	err := s.each(branch, func(en *jsonl.Entry) error {
		tw.entry(en)
		return nil
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

type transcript struct {
	w       io.Writer
	sv      *Session
	full    bool
	cutNote string
	note    bool              // the last thing printed was a one-line note
	edits   map[string]string // target id -> the note of its newest context edit
}

func (t *transcript) head(path []*jsonl.Entry) {
	sv := t.sv
	fmt.Fprintf(t.w, "Session  %s\n", human.QuotePath(sv.Header.ID))
	if sv.HasName {
		fmt.Fprintf(t.w, "Name     %s\n", human.OneLineName(sv.Name, 100))
	}
	fmt.Fprintf(t.w, "File     %s\n", human.QuotePath(sv.Path))
	if sv.Header.HasCwd {
		fmt.Fprintf(t.w, "Cwd      %s\n", human.QuotePath(sv.Header.Cwd))
	}
	if sv.Header.HasParentSession {
		fmt.Fprintf(t.w, "Parent   %s\n", human.QuotePath(sv.Header.ParentSession))
	}
	if ts := sv.Header.Timestamp; ts != "" {
		fmt.Fprintf(t.w, "Created  %s\n", isoShort(ts))
		if rec, ok := migrate.ImportRecordOf(sv.Entries); ok && rec.DateFromFile() {
			fmt.Fprintf(t.w, "         (%s)\n", FileDateNote)
		}
	}
	if len(path) == 0 {
		fmt.Fprintf(t.w, "Branch   empty (%s in the file)\n", human.Plural(len(sv.Entries), "entry", "entries"))
		return
	}
	last := path[len(path)-1]
	fmt.Fprintf(t.w, "Branch   %d of %d entries, ending at %s\n", len(path), len(sv.Entries), jsonl.KeyString(last.ID))
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
			l = human.CutRunes(l, foldWidth)
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
		t.printf("%s... %s\n", indentPrefix, human.Plural(strings.Count(rest, "\n")+1, "more line", "more lines"))
	default:
		n := strings.Count(rest, "\n") + 1
		note := ""
		if t.cutNote != "" {
			note = "; " + t.cutNote
		}
		t.printf("%s[cut: %s more, in %s%s]\n", indentPrefix, human.Bytes(len(rest)), human.Plural(n, "line", "lines"), note)
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

// shortLine is human.OneLine(s, n) for a text of any size: only its beginning
// is looked at.
func shortLine(s string, n int) string {
	return human.OneLine(headBytes(s, 8*n+64), n)
}

func (t *transcript) fold() int {
	if t.full {
		return 0
	}
	return foldLines
}

// label returns "  (label: x)" for a labelled entry.
func (t *transcript) label(en *jsonl.Entry) string {
	note := ""
	if en.IDKind == jsonl.KindString {
		note = t.edits[en.ID]
	}
	if l, ok := t.sv.Labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		return "  (label: " + human.OneLineName(l, 60) + ")" + note
	}
	return note
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
		t.printf("-- model %s [%s]%s\n", stats.ModelName(entryField(en, "provider").str(), entryField(en, "modelId").str()), id, t.label(en))
	case jsonl.TypeThinkingLevelChange:
		t.printf("-- thinking level %s [%s]%s\n", entryField(en, "thinkingLevel").str(), id, t.label(en))
	case jsonl.TypeLabel:
		target := entryField(en, "targetId").str()
		if l := entryField(en, "label").str(); l != "" {
			t.printf("-- label %s: %s [%s]\n", target, human.Quote(l), id)
		} else {
			t.printf("-- label %s cleared [%s]\n", target, id)
		}
	case jsonl.TypeSessionInfo:
		t.printf("-- name %s [%s]\n", human.Quote(entryField(en, "name").str()), id)
	case jsonl.TypeUsage:
		us := stats.ReadUsage(entryField(en, "usage"))
		t.printf("-- usage %s %s  %d tokens %s [%s]", entryField(en, "kind").str(),
			stats.ModelName(entryField(en, "provider").str(), entryField(en, "model").str()), us.TotalTokens, human.Cost(us.Cost.Total), id)
		if n := entryField(en, "note").str(); n != "" {
			t.printf(": %s", human.OneLine(n, 60))
		}
		t.printf("%s\n", t.label(en))
	case jsonl.TypeContextEdit:
		target := entryField(en, "targetId").str()
		rep := entryField(en, "replacement")
		if rep.kind() == jsonl.KindNull {
			t.printf("-- context edit: %s omitted from the model context [%s]\n", target, id)
		} else {
			t.printf("-- context edit: %s replaced in the model context [%s]\n", target, id)
			if t.full {
				if c, ok := jsonl.LookupTrusted(rep, "content"); ok {
					t.body(rview(c).compact(), 0)
				}
			}
		}
	case jsonl.TypeCustom:
		t.printf("-- custom %s [%s]%s\n", entryField(en, "customType").str(), id, t.label(en))
		if t.full {
			if d := entryField(en, "data"); len(d) > 0 {
				t.body(d.compact(), 0)
			}
		}
	default:
		t.printf("-- %s [%s]%s\n", human.Or(en.Type, "entry without a type"), id, t.label(en))
	}
}

func (t *transcript) message(en *jsonl.Entry, id, when string) {
	mv := msgOf(en)
	m := mv.obj()
	role := m.s("role")
	switch role {
	case "user":
		t.printf("[%s] user  %s%s\n", id, when, t.label(en))
		t.content(m.get("content"))
	case "assistant":
		t.printf("[%s] assistant  %s  %s", id, stats.ModelName(m.s("provider"), m.s("model")), when)
		if u := m.get("usage"); u.kind() == jsonl.KindObject {
			us := stats.ReadUsage(u)
			t.printf("  %d tokens %s", us.TotalTokens, human.Cost(us.Cost.Total))
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
			t.body(mv.compact(), 0)
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
					more = " (+" + human.Plural(lines, "line", "lines") + ")"
				}
				t.printf("%sthinking: %s%s\n", indentPrefix, shortLine(firstLineOf(text), thinkWidth), more)
			}
		case "toolCall":
			args := b.args.compact()
			if !t.full {
				args = human.CutRunes(args, argsWidth)
			}
			t.printf("%s-> %s %s\n", indentPrefix, b.name, args)
		case "image":
			t.printf("%s[image %s]\n", indentPrefix, imageNote(b))
		default:
			t.printf("%s[%s block]\n", indentPrefix, human.Or(b.typ, "untyped"))
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
			text = append(text, "["+human.Or(b.typ, "untyped")+" block]")
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

// FileDateNote is what a transcript (and 'sessctl list') says of a date
// that is the source file's modification time: an imported session whose
// source records no date.
const FileDateNote = "the imported session's source records no date: its file's modification time stands in"
