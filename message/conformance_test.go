package message_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// corpusMessages returns every message object in the pi corpus: the
// "message" of each message entry in its session files, and every object
// with a string "role" in its expected outputs (the contexts pi built,
// with the synthesised summary and custom messages), by file.
func corpusMessages(t *testing.T) map[string][][]byte {
	t.Helper()
	root := testenv.Corpus(t, "pi")
	out := map[string][][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case strings.HasSuffix(p, ".jsonl"):
			jsonl.EachEntry(data, func(e *jsonl.Entry, _ *jsonl.MessageMembers) bool {
				if m := e.Message(); jsonl.KindOf(m) == jsonl.KindObject {
					out[rel] = append(out[rel], bytes.Clone(m))
				}
				return true
			})
		case strings.HasSuffix(p, ".json"):
			walkRoles(data, func(obj []byte) { out[rel] = append(out[rel], obj) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// walkRoles calls fn with every object in v that has a string "role".
func walkRoles(v []byte, fn func(obj []byte)) {
	switch jsonl.KindOf(v) {
	case jsonl.KindObject:
		if r, ok := jsonl.Lookup(v, "role"); ok && jsonl.KindOf(r) == jsonl.KindString {
			fn(v)
			return
		}
		_ = jsonl.Members(v, func(m *jsonl.Member) bool {
			walkRoles(m.Value, fn)
			return true
		})
	case jsonl.KindArray:
		_ = jsonl.Elements(v, func(e []byte) bool {
			walkRoles(e, fn)
			return true
		})
	}
}

// TestCorpusRoundTrip decodes every message pi wrote in the corpus and
// encodes it again: the bytes must be JSON.stringify's, and every member
// of the roles pi writes must land in a Go field.
func TestCorpusRoundTrip(t *testing.T) {
	t.Parallel()
	n := 0
	roles := map[string]int{}
	for file, msgs := range corpusMessages(t) {
		for i, raw := range msgs {
			want, err := jsonl.Canonical(nil, raw)
			if err != nil {
				t.Fatalf("%s #%d: %v", file, i, err)
			}
			m, err := message.Decode(raw)
			if err != nil {
				t.Fatalf("%s #%d: decode: %v", file, i, err)
			}
			roles[m.Role()]++
			got, err := message.Encode(m)
			if err != nil {
				t.Fatalf("%s #%d: encode: %v", file, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s #%d: re-encoded differently:\n%s", file, i, cmp.Diff(string(want), string(got)))
			}
			// Hand-made messages without a timestamp (corrupt-or-empty) are
			// not pi's output; every other one must fit the types.
			if _, unknown := m.(*message.Unknown); !unknown && hasTimestamp(raw) {
				if extra := extraKeys(m); len(extra) > 0 {
					t.Errorf("%s #%d: %s members without a Go field: %v", file, i, m.Role(), extra)
				}
			}
			n++
		}
	}
	for _, r := range []string{"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"} {
		if roles[r] == 0 {
			t.Errorf("the corpus has no %s message; the test would not notice a change in it", r)
		}
	}
	t.Logf("%d messages round-tripped: %v", n, roles)
}

func hasTimestamp(raw []byte) bool {
	_, ok := jsonl.Lookup(raw, "timestamp")
	return ok
}

// extraKeys returns the keys of m (and of its blocks and usage) kept as
// JSON instead of in Go fields.
func extraKeys(m message.Message) []string {
	var out []string
	check := func(where string, f *message.Fields) {
		for _, k := range f.Keys() {
			if _, ok := f.Extra(k); ok {
				out = append(out, where+k)
			}
		}
	}
	blocks := func(bs []message.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *message.TextContent:
				check("text.", &b.Fields)
			case *message.ImageContent:
				check("image.", &b.Fields)
			case *message.ThinkingContent:
				check("thinking.", &b.Fields)
			case *message.ToolCall:
				check("toolCall.", &b.Fields)
			default:
				out = append(out, "block "+b.BlockType())
			}
		}
	}
	switch m := m.(type) {
	case *message.User:
		check("", &m.Fields)
		blocks(m.Content.Blocks)
	case *message.Assistant:
		check("", &m.Fields)
		check("usage.", &m.Usage.Fields)
		check("usage.cost.", &m.Usage.Cost.Fields)
		blocks(m.Content)
	case *message.ToolResult:
		check("", &m.Fields)
		blocks(m.Content)
	case *message.BashExecution:
		check("", &m.Fields)
	case *message.Custom:
		check("", &m.Fields)
		blocks(m.Content.Blocks)
	case *message.BranchSummary:
		check("", &m.Fields)
	case *message.CompactionSummary:
		check("", &m.Fields)
	}
	return out
}
