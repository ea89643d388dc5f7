package message_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// checkAppendJSON checks that AppendJSON writes after a prefix what the
// line of a message entry held before it existed: jsonl.Canonical of
// Encode's bytes.
func checkAppendJSON(t *testing.T, name string, m message.Message) {
	t.Helper()
	enc, err := message.Encode(m)
	prefix := []byte(`{"type":"message","message":`)
	got, aerr := message.AppendJSON(bytes.Clone(prefix), m)
	if (err == nil) != (aerr == nil) {
		t.Fatalf("%s: Encode error %v, AppendJSON error %v", name, err, aerr)
	}
	if err != nil {
		if !bytes.Equal(got, prefix) {
			t.Errorf("%s: AppendJSON failed (%v) and returned %q, not the prefix", name, aerr, got)
		}
		return
	}
	want, err := jsonl.Canonical(bytes.Clone(prefix), enc)
	if err != nil {
		t.Fatalf("%s: Encode wrote what Canonical refuses (%v): %s", name, err, enc)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: AppendJSON differs from Canonical(Encode(m)):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}

// fieldsOf returns the kept members of m, its usage, cost and blocks.
func fieldsOf(m message.Message) []*message.Fields {
	var out []*message.Fields
	blocks := func(bs []message.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *message.TextContent:
				out = append(out, &b.Fields)
			case *message.ImageContent:
				out = append(out, &b.Fields)
			case *message.ThinkingContent:
				out = append(out, &b.Fields)
			case *message.ToolCall:
				out = append(out, &b.Fields)
			}
		}
	}
	switch m := m.(type) {
	case *message.User:
		out = append(out, &m.Fields)
		blocks(m.Content.Blocks)
	case *message.Assistant:
		out = append(out, &m.Fields, &m.Usage.Fields, &m.Usage.Cost.Fields)
		blocks(m.Content)
	case *message.ToolResult:
		out = append(out, &m.Fields)
		blocks(m.Content)
	case *message.BashExecution:
		out = append(out, &m.Fields)
	case *message.Custom:
		out = append(out, &m.Fields)
		blocks(m.Content.Blocks)
	case *message.BranchSummary:
		out = append(out, &m.Fields)
	case *message.CompactionSummary:
		out = append(out, &m.Fields)
	}
	return out
}

// deep is a JSON value nested n arrays deep around a number written as
// JSON.stringify would not write it.
func deep(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat("[", n) + "1.50" + strings.Repeat("]", n))
}

// changes are what a caller does to the kept members of an object; each
// is applied to one object of a message at a time.
var changes = []change{
	{"none", func(*message.Fields) {}},
	{"set new", func(f *message.Fields) { f.SetExtra("origin", json.RawMessage(` {"b" : 1.0, "a":"\u003c\/"} `)) }},
	{"set a field's key", func(f *message.Fields) { f.SetExtra("timestamp", json.RawMessage(`1E3`)) }},
	{"set the type", func(f *message.Fields) { f.SetExtra("type", json.RawMessage(`"x"`)) }},
	{"set an array index", func(f *message.Fields) { f.SetExtra("7", json.RawMessage(`[1.0]`)) }},
	{"set invalid JSON", func(f *message.Fields) { f.SetExtra("bad", json.RawMessage(`{`)) }},
	{"set a duplicate-key object", func(f *message.Fields) { f.SetExtra("dup", json.RawMessage(`{"a":1,"b":2,"a":3}`)) }},
	{"set keys that are not UTF-8", func(f *message.Fields) {
		f.SetExtra("\xff", json.RawMessage(`1`))
		f.SetExtra("\xfe", json.RawMessage(`2`))
	}},
	{"set an escaped key", func(f *message.Fields) { f.SetExtra("a\"\n\u2028é", json.RawMessage(`"\ud800"`)) }},
	{"delete first", func(f *message.Fields) {
		if k := f.Keys(); len(k) > 0 {
			f.DeleteExtra(k[0])
		}
	}},
	{"delete last", func(f *message.Fields) {
		if k := f.Keys(); len(k) > 0 {
			f.DeleteExtra(k[len(k)-1])
		}
	}},
	{"set then delete", func(f *message.Fields) {
		f.SetExtra("x", json.RawMessage(`1`))
		f.SetExtra("y", json.RawMessage(`2`))
		f.DeleteExtra("x")
	}},
}

// change is something a caller does to the kept members of an object.
type change struct {
	name string
	do   func(f *message.Fields)
}

// deepChange sets a member nested deeper than Canonical normalises
// (costly under the race detector, so not one of changes, which every
// corpus message goes through).
var deepChange = change{"set deep", func(f *message.Fields) { f.SetExtra("deep", deep(300)) }}

// constructed returns messages of every type built in Go, with every
// optional member set in some and zero fields in others.
func constructed() []message.Message {
	usage := message.NewUsage(12040, 180, 8000, 0, message.Cost{Input: 0.03612, Output: 0.0027, CacheRead: 0.0024, Total: 0.04122})
	call := message.NewToolCall("toolu_01", "edit", struct {
		Path string `json:"path"`
		Old  string `json:"oldText"`
		Big  float64
	}{"a.go", "<&>\u2028\xff", 1e21})
	call.ThoughtSignature = "sig"
	thinking := message.NewThinking("hm")
	thinking.ThinkingSignature, thinking.Redacted = "s", true
	text := message.NewText("t\x00\"\\é😀")
	text.TextSignature = "ts"
	failed := message.NewAssistant("a", "p", "m", nil, usage, message.StopError, at)
	failed.ErrorMessage = "boom"
	result := message.NewToolResult("c", "bash", []message.Block{message.NewText("ok"), message.NewImage("iVBO", "image/png")}, true, at)
	result.Details = map[string]any{"z": 1.0, "a": []any{nil, "x"}}
	raw := message.NewToolResult("c", "bash", nil, false, at)
	raw.Details = json.RawMessage(`{"b":1e2,"a":"\u0041"}`)
	bash := message.NewBashExecution("ls", "out", -3, at)
	bash.Truncated, bash.FullOutputPath, bash.ExcludeFromContext = true, "/tmp/x", true
	custom := message.NewCustom("note", message.Blocks(message.NewText("a"), nil), false, at)
	custom.Details = "str"
	return []message.Message{
		message.NewUser("hi\u2028<b>\xff", at),
		message.NewUserBlocks(at, message.NewText("look"), message.NewImage("iVBO", "image/png")),
		message.NewUserBlocks(at),
		&message.User{},
		message.NewAssistant("anthropic-messages", "anthropic", "claude", []message.Block{thinking, text, call}, usage, message.StopToolUse, at),
		failed,
		&message.Assistant{Content: []message.Block{message.NewToolCall("s", "shot", nil)}},
		&message.Assistant{Timestamp: 1 << 60, Usage: message.Usage{Input: -(1 << 55)}},
		result, raw, &message.ToolResult{},
		bash, &message.BashExecution{Command: "sleep", Cancelled: true}, &message.BashExecution{},
		custom, message.NewCustom("n", message.Text(""), true, at), &message.Custom{Details: json.RawMessage(`{`)},
		&message.BranchSummary{Summary: "s", FromID: "root", Timestamp: 5}, &message.BranchSummary{},
		&message.CompactionSummary{Summary: "s", TokensBefore: 1234.5, Timestamp: 5}, &message.CompactionSummary{TokensBefore: 1e-7},
		&message.Unknown{Raw: json.RawMessage(` {"role":"hook","x":1.0,"x":[ ]} `)},
	}
}

// TestAppendJSONConstructed compares AppendJSON with Canonical(Encode(m))
// for messages built in Go, as they are and after each change to each of
// their objects.
func TestAppendJSONConstructed(t *testing.T) {
	t.Parallel()
	for i := range constructed() {
		for _, c := range append(slices.Clip(changes), deepChange) {
			for k := 0; ; k++ {
				m := constructed()[i] // a fresh copy for every change
				fs := fieldsOf(m)
				if k > 0 && k >= len(fs) {
					break
				}
				if k < len(fs) {
					c.do(fs[k])
				}
				checkAppendJSON(t, m.Role()+"/"+c.name, m)
			}
		}
	}
}

// TestAppendJSONCorpus compares AppendJSON with Canonical(Encode(m)) for
// every message in the pi corpus, decoded, as it is and after each change
// to each of its objects.
func TestAppendJSONCorpus(t *testing.T) {
	t.Parallel()
	n := 0
	for file, msgs := range corpusMessages(t) {
		for _, raw := range msgs {
			for _, c := range changes {
				for k := 0; ; k++ {
					m, err := message.Decode(raw)
					if err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					fs := fieldsOf(m)
					if k > 0 && k >= len(fs) {
						break
					}
					if k < len(fs) {
						c.do(fs[k])
					}
					checkAppendJSON(t, file+"/"+c.name, m)
					n++
				}
			}
		}
	}
	t.Logf("%d messages compared", n)
}

// TestAppendJSONMergesKeysThatAreNotUTF8 pins the one case where Encode
// writes what Canonical changes: two keys that are not UTF-8 are both
// written with U+FFFD, so the line holds the one member JavaScript would
// read.
func TestAppendJSONMergesKeysThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	m := &message.BranchSummary{Summary: "s", FromID: "r", Timestamp: 1}
	m.SetExtra("\xff", json.RawMessage(`1`))
	m.SetExtra("\xfe", json.RawMessage(`2`))
	got, err := message.AppendJSON(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"branchSummary","summary":"s","fromId":"r","timestamp":1,"` + "\uFFFD" + `":2}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzAppendJSON decodes a message, changes a member of it, and compares
// AppendJSON with Canonical(Encode(m)).
func FuzzAppendJSON(f *testing.F) {
	for _, m := range constructed() {
		b, err := message.Encode(m)
		if err == nil {
			f.Add(b, "origin", []byte(`{"a":1.0}`), uint8(0))
		}
	}
	for _, data := range testenv.CorpusFiles(f, testenv.Suffix(".jsonl"), "pi", "cases") {
		jsonl.EachEntry(data, func(e *jsonl.Entry, _ *jsonl.MessageMembers) bool {
			if m := e.Message(); m != nil {
				f.Add(bytes.Clone(m), "usage", []byte(`{"x":[1.0]}`), uint8(1))
			}
			return true
		})
	}
	f.Add([]byte(`{"role":"user","content":"a","timestamp":1,"7":0,"1":0}`), "\xff", []byte(`[1e2]`), uint8(1))
	f.Add([]byte(`{"timestamp":1,"content":[{"type":"text","text":"\ud800"}],"role":"user"}`), "2", []byte(`"\u0041"`), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, key string, value []byte, which uint8) {
		m, err := message.Decode(raw)
		if err != nil {
			return
		}
		checkAppendJSON(t, "decoded", m)
		if fs := fieldsOf(m); len(fs) > 0 {
			f := fs[int(which)%len(fs)]
			if which&0x80 != 0 {
				f.DeleteExtra(key)
			} else {
				f.SetExtra(key, value)
			}
			checkAppendJSON(t, "changed", m)
		}
	})
}
