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

// scan searches the files without an index: their texts are matched by
// the snipper's matcher, which means what the index means.
func scan(ctx context.Context, fsys vfs.FS, sn *snipper, files []found, q Query, warn func(error)) ([]candidate, error) {
	var out []candidate
	// Texts are matched as they are read: memory is bounded by a line.
	add := func(c candidate, text string) error {
		ok, err := sn.matches(q.Text, text) // \x01 and \x02 separate words: no cleanText
		if ok {
			out = append(out, c)
		}
		return err
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
	// The cwd filter needs the header, read by now.
	out = slices.DeleteFunc(out, func(c candidate) bool { return !q.matches(&c) })
	slices.SortFunc(out, func(a, b candidate) int { return compareCandidates(&a, &b) })
	return out, nil
}
