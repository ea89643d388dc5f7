package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestList checks the table and the JSON array of 'sessctl list' for a
// store of one session, and that no sessions give "[]" and no table.
func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := testStore(t, dir).Create(t.Context(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"hello there","timestamp":1}`)); err != nil {
		t.Fatal(err)
	}
	// pi writes a session file once it has an assistant message.
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","timestamp":2}`)); err != nil {
		t.Fatal(err)
	}
	id := s.Header().ID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	infos, err := testStore(t, dir).List(t.Context(), "", engine.ListOptions{NoIndex: true})
	if err != nil || len(infos) != 1 {
		t.Fatalf("List: %d infos, %v", len(infos), err)
	}
	var b strings.Builder
	if err := List(&b, infos); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "MODIFIED") || !strings.Contains(lines[1], "  "+ShortID(id)+"  hello there") {
		t.Errorf("table:\n%s", b.String())
	}
	var arr []map[string]any
	if err := json.Unmarshal(bytes.Join(ListJSON(infos), nil), &arr); err != nil || len(arr) != 1 || arr[0]["id"] != id {
		t.Errorf("ListJSON: %v, %v", arr, err)
	}
	if got := string(bytes.Join(ListJSON(nil), nil)); got != "[]\n" {
		t.Errorf("ListJSON(nil) = %q", got)
	}
	b.Reset()
	if List(&b, nil); b.Len() != 0 {
		t.Errorf("List(nil) wrote %q", b.String())
	}
}
