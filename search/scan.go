package search

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// scanBatch bounds the text matched at once without an index.
const scanBatch = 8 << 20

// scan searches the files without an index: their texts go through the
// in-memory FTS5 table in batches, so that a query means the same with
// and without an index.
func scan(ctx context.Context, sn *snipper, files []found, q Query, warn func(error)) ([]candidate, error) {
	var out []candidate
	var batch []candidate
	var texts []string
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		marked, err := sn.match(ctx, q.Text, texts)
		if err != nil {
			return err
		}
		for i := range batch {
			if _, ok := marked[i]; ok && q.matches(&batch[i]) {
				out = append(out, batch[i])
			}
		}
		batch, texts, size = batch[:0], texts[:0], 0
		return nil
	}
	add := func(c candidate, text string) error {
		batch = append(batch, c)
		texts = append(texts, cleanText(text))
		if size += len(text); size >= scanBatch {
			return flush()
		}
		return nil
	}
	sessions := map[string]*Session{}
	var docs []doc
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			warn(fmt.Errorf("read %s: %w", f.path, err))
			continue
		}
		se := sessions[f.session]
		if se == nil {
			format := FormatJSONL
			if f.kind != fileJSONL {
				format = FormatAgentUse
			}
			se = &Session{Path: f.session, Format: format}
			sessions[f.session] = se
		}
		if f.kind != fileJSONL {
			var entry string
			var ts int64
			docs, entry, ts = agentUseDocs(f.kind, data, docs[:0])
			if entry == "" {
				entry = strings.TrimSuffix(filepath.Base(f.path), ".json")
				if f.kind == fileAUMessage {
					entry = filepath.Base(filepath.Dir(f.path))
				}
			}
			if f.kind == fileAUSession {
				obj := trimWS(data)
				se.ID, se.Name, se.Cwd = entry, lookupString(obj, "agent", "name"), lookupString(obj, "project", "cwd")
			}
			for i, d := range docs {
				c := candidate{sess: se, file: f.path, fkind: f.kind, off: 0, n: int64(len(data)), part: i, kind: d.kind, tool: d.tool, ts: ts, entry: entry}
				if err := add(c, d.text); err != nil {
					return nil, err
				}
			}
			continue
		}
		first := true
		for pos := 0; pos < len(data); {
			nl := bytes.IndexByte(data[pos:], '\n')
			next := pos + nl + 1
			if nl < 0 {
				next = len(data)
			}
			line := data[pos:next]
			if nl >= 0 {
				line = data[pos : next-1]
			}
			off := pos
			pos = next
			if jsonl.JSBlank(line) {
				continue
			}
			e, err := jsonl.ParseEntry(line)
			if err != nil {
				continue
			}
			if first {
				first = false
				if e.Type != jsonl.TypeSession {
					break
				}
				se.ID, se.Cwd = e.ID, jsonl.ParseHeader(e).Cwd
			}
			if e.Type == jsonl.TypeSessionInfo {
				if v, ok := e.StringField("name"); ok && jsonl.JSTrim(v) != "" {
					se.Name = jsonl.JSTrim(v)
				}
			}
			docs = lineDocs(&e, docs[:0])
			ts := int64(0)
			if ms, ok := jsonl.ParseDate(e.Timestamp); ok && !math.IsNaN(ms) {
				ts = int64(ms)
			}
			entry := e.ID
			if e.IDKind != jsonl.KindString {
				entry = ""
			}
			for i, d := range docs {
				c := candidate{sess: se, file: f.path, fkind: fileJSONL, off: int64(off), n: int64(len(line)), part: i, kind: d.kind, tool: d.tool, ts: ts, entry: entry}
				if err := add(c, d.text); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	// The cwd filter needs the header, read by now.
	out = slices.DeleteFunc(out, func(c candidate) bool { return !q.matches(&c) })
	slices.SortFunc(out, func(a, b candidate) int { return compareCandidates(&a, &b) })
	return out, nil
}
