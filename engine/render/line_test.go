package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestEntryLine checks the one-line descriptions of 'sessctl tail': the
// role, model and tool calls of a message, the first line of its text cut
// to lineWidth runes, and the id and time around it.
func TestEntryLine(t *testing.T) {
	t.Parallel()
	s, err := testStore(t, "").Create(t.Context(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := strings.Repeat("é", lineWidth+5)
	user, _ := json.Marshal("\n  first line  \nsecond")
	for _, m := range []string{
		`{"role":"user","content":` + string(user) + `,"timestamp":1}`,
		`{"role":"assistant","content":[{"type":"text","text":"` + long + `"},{"type":"toolCall","id":"c","name":"bash","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":2}`,
	} {
		if _, err := s.AppendMessage(raw(m)); err != nil {
			t.Fatal(err)
		}
	}
	all := s.Entries()
	got := []string{EntryLine(all[len(all)-2]), EntryLine(all[len(all)-1])}
	want := []string{
		"user: first line",
		"assistant p/m (toolUse): " + long[:2*lineWidth] + "… -> bash",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
	var b strings.Builder
	WriteEntryLine(&b, all[len(all)-2])
	if w := "[" + all[len(all)-2].ID + "] "; !strings.HasPrefix(b.String(), w) || !strings.HasSuffix(b.String(), " user: first line\n") {
		t.Errorf("WriteEntryLine wrote %q", b.String())
	}
}
