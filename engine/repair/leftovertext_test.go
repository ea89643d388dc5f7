package repair

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLeftoverText checks the words and the JSON of leftovers, and the
// lines of what ClearLeftovers removed.
func TestLeftoverText(t *testing.T) {
	held := Leftover{Path: "/d/a<b>.jsonl.tmp", Session: "/d/a<b>.jsonl", Held: true}
	free := Leftover{Path: "/d/c.jsonl.lock", Session: "/d/c.jsonl"}
	if got, want := held.Text("x"), "/d/a<b>.jsonl.tmp: note: a file of a write of a<b>.jsonl that is going on (it has not written the session yet)"; got != want {
		t.Errorf("held: %q, want %q", got, want)
	}
	if got, want := free.Text("run it"), "/d/c.jsonl.lock: note: leftover: left by a writer of c.jsonl that was stopped before it wrote it; run it"; got != want {
		t.Errorf("free: %q, want %q", got, want)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(held); err != nil || b.String() != `{"leftover":"/d/a<b>.jsonl.tmp","session":"/d/a<b>.jsonl","held":true}`+"\n" {
		t.Errorf("JSON: %s, %v", b.String(), err)
	}
	var s strings.Builder
	_ = WriteCleared(&s, "/d", []string{"/d/c.jsonl.lock"})
	_ = WriteCleared(&s, "/e", nil)
	if want := "removed /d/c.jsonl.lock\nno leftovers below /e\n"; s.String() != want {
		t.Errorf("WriteCleared: %q, want %q", s.String(), want)
	}
}
