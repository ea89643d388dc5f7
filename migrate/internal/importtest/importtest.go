// Package importtest holds what the importer tests share: finding the
// foreign conformance corpus, running a store through an importer, and
// checking that an imported session is a well-formed pi v3 file whose
// context holds the source's messages with their tool calls paired.
package importtest

import (
	"context"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// RepoRoot returns the directory holding go.mod (testenv.RepoRoot).
func RepoRoot(t testing.TB) string {
	t.Helper()
	return testenv.RepoRoot(t)
}

// Corpus returns ../shared/conformance/foreign/<parts> beside the
// repository (see testenv.Corpus: skipped when absent, failed then when
// SESSCTL_REQUIRE_CONFORMANCE=1).
func Corpus(t testing.TB, parts ...string) string {
	t.Helper()
	return testenv.Corpus(t, append([]string{"foreign"}, parts...)...)
}

// Result is everything one run of an importer over a store produced.
type Result struct {
	Sessions []*migrate.Imported
	Damage   []*migrate.Damage
	Skipped  []*migrate.Skip
	Refs     []migrate.Ref
	// Read holds, for each file whose reading the importer reported
	// through ImportOptions.Progress, the last bytes read and size it
	// reported.
	Read map[string][2]int64
}

// Import opens path with src and converts every session.
func Import(t testing.TB, src migrate.Source, path string, opts migrate.ImportOptions) *Result {
	t.Helper()
	ctx := context.Background()
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	res := &Result{Read: map[string][2]int64{}}
	if opts.Progress == nil {
		// Progress must only go forward and never past the size.
		opts.Progress = func(path string, done, total int64) {
			last, seen := res.Read[path]
			if done < 0 || done > total || seen && done < last[0] && done != 0 {
				t.Errorf("progress of %s went from %d/%d to %d/%d", path, last[0], last[1], done, total)
			}
			res.Read[path] = [2]int64{done, total}
		}
	}
	st, err := src.Open(ctx, path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	for ref, err := range st.Sessions(ctx) {
		if err != nil {
			if d, ok := err.(*migrate.Damage); ok {
				res.Damage = append(res.Damage, d)
				continue
			}
			t.Fatalf("list %s: %v", path, err)
		}
		res.Refs = append(res.Refs, ref)
		conv, err := st.Convert(ctx, ref)
		if err != nil {
			t.Fatalf("convert %s: %v", ref.ID, err)
		}
		res.Sessions = append(res.Sessions, conv.Sessions...)
		res.Damage = append(res.Damage, conv.Damage...)
		res.Skipped = append(res.Skipped, conv.Skipped...)
	}
	return res
}

// ByID returns the imported session with the given source id.
func (r *Result) ByID(t testing.TB, sourceID string) *migrate.Imported {
	t.Helper()
	for _, s := range r.Sessions {
		if s.SourceID == sourceID {
			return s
		}
	}
	var ids []string
	for _, s := range r.Sessions {
		ids = append(ids, s.SourceID)
	}
	t.Fatalf("no imported session with source id %q (have %v)", sourceID, ids)
	return nil
}

// Loaded is an imported session read back the way sessctl reads it.
type Loaded struct {
	Entries []jsonl.Entry
	Header  jsonl.Header
	Index   *tree.Index
	Context compaction.Context
}

// Msg is one context message reduced to what tests compare.
type Msg struct {
	Role       string
	Text       string   // text blocks (or string content) joined by "\n"
	ToolCalls  []string // toolCall ids of an assistant message
	ToolCallID string   // of a toolResult
	CustomType string   // of a custom message
}

// Load parses the file bytes of s (with parentSession) and checks them:
// a valid v3 header first, the provenance entry next, unique ids, every
// parent present and earlier in the file, a single root, and the leaf
// being the last line.
func Load(t testing.TB, s *migrate.Imported, parentSession string) *Loaded {
	t.Helper()
	data := s.Bytes(parentSession)
	p := jsonl.ParseFile(data)
	if len(p.Malformed) > 0 || p.Tail != jsonl.TailClean {
		t.Fatalf("%s: malformed lines %v, tail %v", s.SourceID, p.Malformed, p.Tail)
	}
	if len(p.Entries) < 2 || !p.Entries[0].IsHeader() {
		t.Fatalf("%s: no header", s.SourceID)
	}
	for i, e := range p.Entries {
		if !jsonl.IsCanonical(e.Raw) {
			t.Errorf("%s line %d is not JSON.stringify output: %s", s.SourceID, i+1, e.Raw)
		}
	}
	h := jsonl.ParseHeader(p.Entries[0])
	if h.Version != 3 || h.ID != s.ID || !h.HasCwd || h.Cwd != s.Cwd {
		t.Errorf("%s: header %s", s.SourceID, p.Entries[0].Raw)
	}
	if parentSession != "" && h.ParentSession != parentSession {
		t.Errorf("%s: parentSession %q, want %q", s.SourceID, h.ParentSession, parentSession)
	}
	if ct, _ := p.Entries[1].StringField("customType"); p.Entries[1].Type != jsonl.TypeCustom || ct != migrate.ImportType {
		t.Errorf("%s: second line is not the import record: %s", s.SourceID, p.Entries[1].Raw)
	}
	seen := make(map[string]bool)
	roots := 0
	for _, e := range p.Entries[1:] {
		if e.IDKind != jsonl.KindString || len(e.ID) != 8 {
			t.Errorf("%s: bad id in %s", s.SourceID, e.Raw)
		}
		if seen[e.ID] {
			t.Errorf("%s: duplicate id %s", s.SourceID, e.ID)
		}
		switch e.ParentKind {
		case jsonl.KindNull:
			roots++
		case jsonl.KindString:
			if !seen[e.ParentID] {
				t.Errorf("%s: parent %s of %s is not an earlier entry", s.SourceID, e.ParentID, e.ID)
			}
		default:
			t.Errorf("%s: entry %s has no parentId", s.SourceID, e.ID)
		}
		if _, ok := jsonl.ParseDate(e.Timestamp); !ok {
			t.Errorf("%s: bad timestamp in %s", s.SourceID, e.Raw)
		}
		seen[e.ID] = true
		if e.Type == jsonl.TypeCompaction {
			if fk, ok := e.StringField("firstKeptEntryId"); !ok || fk == "" {
				t.Errorf("%s: compaction without firstKeptEntryId: %s", s.SourceID, e.Raw)
			}
		}
	}
	if roots != 1 {
		t.Errorf("%s: %d roots, want 1", s.SourceID, roots)
	}
	ix := tree.Build(p.Entries)
	leaf, _ := ix.Leaf()
	if last := p.Entries[len(p.Entries)-1]; leaf != last.ID {
		t.Errorf("%s: leaf %s is not the last line", s.SourceID, leaf)
	}
	ctx := compaction.Build(ix, compaction.Leaf{})
	return &Loaded{Entries: p.Entries, Header: h, Index: ix, Context: ctx}
}

// Messages returns the context messages in order.
func (l *Loaded) Messages() []Msg {
	var out []Msg
	for _, m := range l.Context.Messages {
		out = append(out, Reduce(m.Raw))
	}
	return out
}

// Reduce turns a message object into a Msg.
func Reduce(raw []byte) Msg {
	var m Msg
	m.Role = str(raw, "role")
	m.CustomType = str(raw, "customType")
	m.ToolCallID = str(raw, "toolCallId")
	content, _ := jsonl.Lookup(raw, "content")
	if m.Role == "compactionSummary" {
		content, _ = jsonl.Lookup(raw, "summary")
	}
	if s, ok := jsonl.String(content); ok {
		m.Text = s
		return m
	}
	var texts []string
	_ = jsonl.Elements(content, func(b []byte) bool {
		switch str(b, "type") {
		case "text":
			texts = append(texts, str(b, "text"))
		case "toolCall":
			m.ToolCalls = append(m.ToolCalls, str(b, "id"))
		}
		return true
	})
	m.Text = strings.Join(texts, "\n")
	return m
}

func str(obj []byte, k string) string {
	v, _ := jsonl.Lookup(obj, k)
	s, _ := jsonl.String(v)
	return s
}

// CheckToolPairs checks that every tool call in the context is answered
// by a later toolResult with its id, after its assistant message and
// before the next assistant message, and every toolResult answers an
// earlier call.
func CheckToolPairs(t testing.TB, name string, msgs []Msg) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case "assistant", "user":
			for id := range open {
				t.Errorf("%s: tool call %s has no result before message %d (%s)", name, id, i, m.Role)
				delete(open, id)
			}
			for _, id := range m.ToolCalls {
				open[id] = true
			}
		case "toolResult":
			if !open[m.ToolCallID] {
				t.Errorf("%s: toolResult %d answers no open tool call (%s)", name, i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
}

// CheckReimport converts the store again and checks every session has
// exactly the same bytes.
func CheckReimport(t testing.TB, src migrate.Source, path string, opts migrate.ImportOptions, first *Result) {
	t.Helper()
	again := Import(t, src, path, opts)
	if len(again.Sessions) != len(first.Sessions) {
		t.Fatalf("re-import gave %d sessions, first %d", len(again.Sessions), len(first.Sessions))
	}
	for i, s := range first.Sessions {
		if a, b := string(s.Bytes("p")), string(again.Sessions[i].Bytes("p")); a != b {
			t.Errorf("re-import of %s changed its bytes", s.SourceID)
		}
	}
}
