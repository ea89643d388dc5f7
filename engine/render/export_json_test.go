package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
)

// referenceJSON is JSON as it was written before the export streamed each
// message into its item (each item built whole, then indented): the
// output the streaming export must reproduce byte for byte.
func referenceJSON(s *Session, branch []*engine.Entry, opts Options) ([]byte, error) {
	var out bytes.Buffer
	err := write(&out, s, branch, opts, func(d *doc, w *bufio.Writer) error {
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
			return err
		}
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n}")))
		w.WriteString(",\n  \"messages\": [")
		n := 0
		err := d.s.each(d.path, func(raw *jsonl.Entry) error {
			en, err := d.view(raw)
			if err != nil {
				return err
			}
			m := referenceMessage(en)
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
			// The whole item through encoding/json's Indent, which
			// validates it: the slowest, surest reference.
			var ind bytes.Buffer
			if err := json.Indent(&ind, item.Bytes(), "    ", "  "); err != nil {
				return fmt.Errorf("line %d: %w", en.Line, err)
			}
			w.Write(ind.Bytes())
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
	})
	return out.Bytes(), err
}

// referenceMessage is exportMessage as it was: every member looked up
// in the whole line.
func referenceMessage(en *jsonl.Entry) []byte {
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

// maskRedactor masks "secret" in every line and text (enough to send
// the export through its redacting path, which parses each entry anew).
type maskRedactor struct{}

func (maskRedactor) Header(line []byte) ([]byte, error) { return maskBytes(line), nil }
func (maskRedactor) Entry(line []byte) ([]byte, error)  { return maskBytes(line), nil }
func (maskRedactor) String(s string) string             { return strings.ReplaceAll(s, "secret", "[MASKED]") }

func maskBytes(b []byte) []byte { return bytes.ReplaceAll(b, []byte("secret"), []byte("[MASKED]")) }

// compareJSON checks JSON against referenceJSON for the session file at
// path, read both ways the renderers are given sessions (a View, and a
// whole read-only open), for the leaf's branch and for the branch ending
// at each entry, with and without redaction. It reports how many
// documents it compared; 0 when the file is not a session engine opens.
func compareJSON(t *testing.T, st *engine.Store, path string, everyBranch bool) int {
	t.Helper()
	v, err := st.View(t.Context(), path)
	if err != nil {
		return 0
	}
	defer v.Close()
	s, err := st.Open(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: a View opened but Open failed: %v", path, err)
	}
	defer s.Close()
	ends := []string{""}
	if everyBranch {
		for _, en := range v.Entries() {
			if en.IDKind == jsonl.KindString {
				ends = append(ends, en.ID)
			}
		}
	}
	n := 0
	for _, sess := range []struct {
		name   string
		s      *Session
		branch func(id string) []*engine.Entry
	}{
		{"view", SnapshotView(v), v.BranchPath},
		{"open", Snapshot(s), s.BranchPath},
	} {
		for _, id := range ends {
			branch := sess.branch(id)
			for _, opts := range []Options{{}, {Redactor: maskRedactor{}}} {
				want, werr := referenceJSON(sess.s, branch, opts)
				var got bytes.Buffer
				gerr := JSON(&got, sess.s, branch, opts)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s (%s, branch to %q, redacted %v): error %v, reference's %v", path, sess.name, id, opts.Redactor != nil, gerr, werr)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("%s (%s, branch to %q, redacted %v): the export differs from the reference at byte %d:\n got %.300q\nwant %.300q",
						path, sess.name, id, opts.Redactor != nil, firstDiff(got.Bytes(), want), tail(got.Bytes(), want), tail(want, got.Bytes()))
				}
				n++
			}
		}
	}
	return n
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// tail is a from a little before where it differs from b.
func tail(a, b []byte) []byte { return a[max(0, firstDiff(a, b)-80):] }

// TestJSONMatchesReferenceOnCorpus compares the export with the reference
// on every pi session of the conformance corpus (and the foreign ones
// engine opens), at every branch.
func TestJSONMatchesReferenceOnCorpus(t *testing.T) {
	root := testenv.Corpus(t)
	st := testStore(t, "")
	files, docs := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		if n := compareJSON(t, st, p, true); n > 0 {
			files++
			docs += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d corpus files compared: the corpus walk found too few sessions", files)
	}
	t.Logf("%d files, %d documents identical", files, docs)
}

// TestJSONMatchesReferenceOnOddLines compares the export with the
// reference on the lines the streaming path treats apart: a message that
// is not an object or is missing, duplicate message members, non-string
// and object ids, whitespace between tokens, empty objects and arrays,
// labels, escapes, and every entry kind that carries a message.
func TestJSONMatchesReferenceOnOddLines(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi secret \u2028 <>& \"q\" \\ é","timestamp":1}}`,
		`{ "type" : "message" , "id" : "a2" , "parentId" : "a1" , "timestamp" : "2026-03-01T09:00:02.000Z" , "message" : { "role" : "assistant" , "content" : [ { "type" : "text" , "text" : "x" } , { } , [ ] ] , "usage" : { } } }`,
		`{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-03-01T09:00:03.000Z","message":"just a string"}`,
		`{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-03-01T09:00:04.000Z"}`,
		`{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-03-01T09:00:05.000Z","message":{"role":"user","content":"first"},"message":{"role":"user","content":"second"}}`,
		`{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-03-01T09:00:06.000Z","message":{"role":"user","content":"obj"},"message":null}`,
		`{"type":"message","id":"a7","parentId":"a6","timestamp":"not a time","messag\u0065":{"role":"user","content":"escaped key"}}`,
		`{"type":"label","id":"l1","parentId":"a7","timestamp":"2026-03-01T09:00:07.000Z","targetId":"a2","label":"the secret \"one\""}`,
		`{"type":"custom_message","id":"c1","parentId":"l1","timestamp":"2026-03-01T09:00:08.000Z","customType":"note","content":[{"type":"text","text":"c"}],"display":true,"details":{"k":[1,2.5e3,-0,true,null]}}`,
		`{"type":"branch_summary","id":"b1","parentId":"c1","timestamp":"2026-03-01T09:00:09.000Z","fromId":"a1","summary":"went elsewhere"}`,
		`{"type":"branch_summary","id":"b2","parentId":"b1","timestamp":"2026-03-01T09:00:10.000Z","fromId":"a1","summary":""}`,
		`{"type":"compaction","id":"k1","parentId":"b2","timestamp":"2026-03-01T09:00:11.000Z","summary":"sum","firstKeptEntryId":"a5","tokensBefore":1234}`,
		`{"type":"thinking_level_change","id":"t1","parentId":"k1","timestamp":"2026-03-01T09:00:12.000Z","thinkingLevel":"high"}`,
		`{"type":"session_info","id":"i1","parentId":"t1","timestamp":"2026-03-01T09:00:13.000Z","name":"a secret name"}`,
		`{"type":"message","id":7,"parentId":"i1","timestamp":"2026-03-01T09:00:14.000Z","message":{"role":"user","content":"numeric id"}}`,
		`{"type":"message","id":{"odd":[1,{"x":2}]},"parentId":7,"timestamp":"2026-03-01T09:00:15.000Z","message":{"role":"user","content":"object id"}}`,
		`{"type":"message","parentId":"i1","timestamp":"2026-03-01T09:00:16.000Z","message":{"role":"user","content":"no id"}}`,
		`{"type":"message","id":"z1","parentId":"i1","timestamp":"2026-03-01T09:00:17.000Z","message":{}}`,
	}
	path := filepath.Join(dir, "odd.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := testStore(t, dir)
	if n := compareJSON(t, st, path, true); n == 0 {
		t.Fatal("the crafted session did not open")
	}
}

// TestJSONMatchesReferenceOnGeneratedSessions compares the export with
// the reference on generated sessions (tool calls and results, thinking,
// images, branches, compactions), large enough to span many of a View's
// read windows.
func TestJSONMatchesReferenceOnGeneratedSessions(t *testing.T) {
	dir := t.TempDir()
	st := testStore(t, dir)
	for i, o := range []workload.Options{
		{Seed: 1, Entries: 3000},
		{Seed: 2, Entries: 2000, ImageEvery: 50},
		{Seed: 3, Entries: 500, ToolResultMin: 1, ToolResultMax: 200000},
	} {
		path := filepath.Join(dir, fmt.Sprintf("gen%d.jsonl", i))
		if _, err := workload.WriteFile(path, o); err != nil {
			t.Fatal(err)
		}
		if n := compareJSON(t, st, path, false); n == 0 {
			t.Fatalf("%s did not open", path)
		}
	}
}
