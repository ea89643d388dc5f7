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
	var ind []byte
	err := d.s.each(d.path, func(raw *jsonl.Entry) error {
		en, err := d.view(raw)
		if err != nil {
			return err
		}
		m := exportMessage(en)
		if m == nil {
			return nil
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
		// The item is valid JSON (its parts come from parsed lines), so
		// it is indented without being validated again.
		ind = jsonl.IndentTrusted(ind[:0], item.Bytes(), "    ", "  ")
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
