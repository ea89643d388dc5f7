package search

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// scanBatch bounds the text matched at once without an index. Tests
// lower it.
var scanBatch = 8 << 20

// scan searches the files without an index: their texts go through the
// in-memory FTS5 table in batches, so that a query means the same with
// and without an index.
func scan(ctx context.Context, fsys vfs.FS, sn *snipper, files []found, q Query, warn func(error)) ([]candidate, error) {
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
	var buf []byte
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		se := sessions[f.session]
		if se == nil {
			format := layout.FormatJSONL
			if f.kind != fileJSONL {
				format = layout.FormatAgentUse
			}
			se = &Session{Path: f.session, Format: format}
			sessions[f.session] = se
		}
		if f.kind != fileJSONL {
			// AgentUse files are small JSON documents, read whole.
			data, err := fsys.ReadFile(f.path)
			if err != nil {
				warn(fmt.Errorf("read %s: %w", f.path, err))
				continue
			}
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
		// A session file is read a chunk at a time: memory is bounded
		// by a line (and scanBatch), not by the file.
		fh, err := fsys.OpenFile(f.path, os.O_RDONLY, 0)
		var fi fs.FileInfo
		if err == nil {
			fi, err = fh.Stat()
		}
		if err != nil {
			if fh != nil {
				fh.Close()
			}
			warn(fmt.Errorf("read %s: %w", f.path, err))
			continue
		}
		first := true
		var addErr error
		err = eachLine(fh, 0, fi.Size(), &buf, func(off int64, line []byte, terminated bool) (bool, error) {
			if terminated {
				line = line[:len(line)-1]
			}
			if jsonl.JSBlank(line) {
				return true, nil
			}
			e, err := jsonl.ParseEntry(line)
			if err != nil {
				return true, nil
			}
			if first {
				first = false
				if e.Type != jsonl.TypeSession {
					return false, nil
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
				c := candidate{sess: se, file: f.path, fkind: fileJSONL, off: off, n: int64(len(line)), part: i, kind: d.kind, tool: d.tool, ts: ts, entry: entry}
				if addErr = add(c, d.text); addErr != nil {
					return false, nil
				}
			}
			return true, nil
		})
		fh.Close()
		if addErr != nil {
			return nil, addErr
		}
		if err != nil {
			warn(fmt.Errorf("read %s: %w", f.path, err))
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
