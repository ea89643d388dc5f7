package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// JSON writes the branch of s (root first, redacted as opts asks) as one
// JSON object, indented by two spaces:
//
//	{"format": "sessctl-export/1", "path": FILE, "header": HEADER,
//	 "name": NAME, "leaf": ID, "messages": [ITEM...]}
//
// HEADER is the stored header object; NAME and ID are null when absent.
// Each ITEM is {"id", "type", "timestamp", "label" (only when labelled),
// "message"}, one per entry of the branch that carries conversation, as
// pi's buildSessionContext gives them: a message entry's stored message, a
// custom_message as {"role": "custom", ...}, a branch_summary as {"role":
// "branchSummary", ...} (left out when empty) and a compaction as
// {"role": "compactionSummary", ...}. The document is streamed: when
// JSON fails, part of it may have been written.
func JSON(w io.Writer, s *Session, branch []*engine.Entry, opts Options) error {
	return write(w, s, branch, opts, (*doc).json)
}

// json writes the export object indented by two spaces, one message at a
// time: the object without its messages first, then each item indented
// in place, so the output is byte for byte what indenting the whole
// object would give.
func (d *doc) json(w *bufio.Writer) error {
	b := jsonl.NewObject(1<<12).
		String("format", "sessctl-export/1").
		String("path", d.s.Path).
		Raw("header", d.header)
	if d.s.HasName {
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
	var ind, built []byte
	err := d.s.each(d.path, func(raw *jsonl.Entry) error {
		en, err := d.view(raw)
		if err != nil {
			return err
		}
		var m []byte
		if m, built = exportMessage(built[:0], en); m == nil {
			return nil
		}
		if n > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		ind = d.jsonItem(ind[:0], en, m)
		w.Write(ind)
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return nil
}

// jsonItem appends to dst the export item of en, whose message m is,
// indented as json.Indent would indent it at its place in the document
// (prefix "    ", indent "  "). It writes the few members of the item's
// head itself and indents m in place, so that a message is read once and
// its bytes are copied once, not built into an item first: the strings
// of m, most of its bytes, are copied as they are.
func (d *doc) jsonItem(dst []byte, en *jsonl.Entry, m []byte) []byte {
	const member = "\n      " // a member of the item: prefix and one indent
	dst = append(dst, '{')
	dst = append(dst, member+`"id": `...)
	switch en.IDKind {
	case jsonl.KindAbsent:
		dst = append(dst, "null"...)
	case jsonl.KindString: // IDJSON's bytes, without its allocation
		dst = jsonl.AppendString(dst, en.ID)
	default:
		// A non-string id is the raw value as stored: it may be an
		// object or an array, indented as the rest.
		id, _ := en.IDJSON()
		dst = jsonl.IndentTrusted(dst, id, "      ", "  ")
	}
	dst = append(dst, ","+member+`"type": `...)
	dst = jsonl.AppendString(dst, en.Type)
	dst = append(dst, ","+member+`"timestamp": `...)
	dst = jsonl.AppendString(dst, en.Timestamp)
	if l, ok := d.labels[en.ID]; ok && en.IDKind == jsonl.KindString {
		dst = append(dst, ","+member+`"label": `...)
		dst = jsonl.AppendString(dst, l)
	}
	dst = append(dst, ","+member+`"message": `...)
	// Indented alone with the item's prefix and indent added to its own
	// prefix, m comes out as it would inside the item: its members one
	// level deeper than the item's.
	dst = jsonl.IndentTrusted(dst, m, "      ", "  ")
	return append(dst, "\n    }"...)
}

// exportMessage converts one entry as pi's buildSessionContext converts
// path entries, with a compaction giving its compactionSummary in place:
// a message entry's stored message (a part of en.Raw, not copied), or
// the object it builds in buf (returned too, for the next call to use);
// nil for entries that carry no message.
func exportMessage(buf []byte, en *jsonl.Entry) (m, _ []byte) {
	var b jsonl.ObjectBuilder
	switch en.Type {
	case jsonl.TypeMessage:
		if m := en.Message(); m != nil {
			// The span of the last "message" member, found when the line
			// was parsed, when it is an object (what Field would find).
			return m, buf
		}
		m, ok := en.Field("message")
		if !ok {
			return []byte("null"), buf
		}
		return m, buf
	case jsonl.TypeCustomMessage:
		b.StartIn(buf).String("role", "custom")
		for _, k := range []string{"customType", "content", "display", "details"} {
			if v, ok := en.Field(k); ok {
				b.Raw(k, v)
			}
		}
	case jsonl.TypeBranchSummary:
		s := entryField(en, "summary")
		if s.str() == "" {
			return nil, buf
		}
		b.StartIn(buf).String("role", "branchSummary").Raw("summary", s)
		if v, ok := en.Field("fromId"); ok {
			b.Raw("fromId", v)
		}
	case jsonl.TypeCompaction:
		b.StartIn(buf).String("role", "compactionSummary")
		for _, k := range []string{"summary", "tokensBefore"} {
			if v, ok := en.Field(k); ok {
				b.Raw(k, v)
			}
		}
	default:
		return nil, buf
	}
	m = exportTime(&b, en).Bytes()
	return m, m
}

func exportTime(b *jsonl.ObjectBuilder, en *jsonl.Entry) *jsonl.ObjectBuilder {
	if ms, ok := jsonl.ParseDate(en.Timestamp); ok {
		return b.Number("timestamp", ms)
	}
	return b.Null("timestamp")
}
