package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/message"
)

// TestTypedAppendIsJSONAppend appends typed messages, encoded straight
// into their lines, beside a session that appends the same messages as
// the JSON Encode gives them (decoded again): the files and the indexed
// messages must be the same, and each message the Canonical form of its
// Encode. The messages are decoded ones with kept members changed, ones
// with keys Canonical merges, and ones growing past the room the session
// asks for (up to more than a line block), so that lines outgrow it.
func TestTypedAppendIsJSONAppend(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1772442003123)
	var msgs []message.Message
	decoded, err := message.Decode([]byte(`{"timestamp":1,"content":[{"type":"text","text":"a","citations":[1.0]}],"role":"user","7":0}`))
	if err != nil {
		t.Fatal(err)
	}
	decoded.(*message.User).SetExtra("origin", json.RawMessage(` {"b" : 1E2} `))
	odd := message.NewUser("odd keys", at)
	odd.SetExtra("\xff", json.RawMessage(`1`))
	odd.SetExtra("\xfe", json.RawMessage(`2`))
	msgs = append(msgs, decoded, odd, &message.Unknown{Raw: json.RawMessage(`{"role":"custom","x":1.0}`)})
	for n := 1; n < 200<<10; n = n*3 + 7 {
		text := strings.Repeat("é<\n", n/4+1)
		msgs = append(msgs,
			message.NewAssistant("a", "p", "m", []message.Block{message.NewText(text)}, message.NewUsage(1, 2, 3, 4, message.Cost{Total: 0.5}), message.StopStop, at),
			message.NewUser(text[:len(text)/2], at))
	}
	typedDir, rawDir := t.TempDir(), t.TempDir()
	open := func(dir string) *engine.Session {
		opts := fixedOptions()
		opts.Dir = dir
		s, err := createIn(t, opts, "/p", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	typed, fromJSON := open(typedDir), open(rawDir)
	id := must[string](t)
	for _, m := range msgs {
		id(typed.AppendMessage(m))
		enc, err := message.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		// The JSON Encode gives, decoded again: the same message.
		id(fromJSON.AppendMessage(raw(string(enc))))
	}
	if diff := cmp.Diff(lines(fromJSON), lines(typed)); diff != "" {
		t.Errorf("typed appends wrote other lines than the JSON (-json +typed):\n%s", diff)
	}
	entries := typed.Entries()
	for i, m := range msgs {
		enc, _ := message.Encode(m)
		want, _ := jsonl.Canonical(nil, enc)
		e := entries[len(entries)-len(msgs)+i]
		if got := e.Message(); !bytes.Equal(got, want) {
			t.Errorf("message %d indexed as %.80q, want %.80q", i, got, want)
		}
	}
	for _, s := range []*engine.Session{typed, fromJSON} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(files(t, rawDir), files(t, typedDir)); diff != "" {
		t.Errorf("the files differ (-json +typed):\n%.2000s", diff)
	}
}

// files returns the contents of the session files in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			b, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no session file in %s", dir)
	}
	return out
}
