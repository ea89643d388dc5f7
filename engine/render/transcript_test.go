package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestTranscriptCutsLongTexts checks that a transcript, without full, cuts a text
// after maxBodyLines lines or maxBodyBytes bytes and says how much it left
// out, and that full prints everything.
func TestTranscriptCutsLongTexts(t *testing.T) {
	t.Parallel()
	s, err := testStore(t, "").Create(t.Context(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	huge := strings.Repeat("summary words ", 150000) // 2.1 MB on one line
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprintf("line %d", i))
	}
	user, _ := json.Marshal(strings.Join(many, "\n"))
	first, err := s.AppendMessage(raw(`{"role":"user","content":` + string(user) + `,"timestamp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":[{"type":"text","text":"short answer"}],"provider":"p","model":"m","timestamp":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendCompaction(engine.Compaction{Summary: huge, FirstKeptEntryID: first, TokensBefore: 10}); err != nil {
		t.Fatal(err)
	}
	snap := Snapshot(s)
	branch := s.BranchPath("")
	transcript := func(full bool) string {
		t.Helper()
		var b strings.Builder
		// The caller words what the cut marker says of seeing it all.
		if err := Transcript(&b, snap, branch, TranscriptOptions{Full: full, CutNote: "--full shows all"}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	out := transcript(false)
	for _, want := range []string{
		"    line 199\n    [cut: 7.0 KB more, in 800 lines; --full shows all]\n",
		"    short answer\n",
		"\n    [cut: 2.0 MB more, in 1 line; --full shows all]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the transcript lacks %q", want)
		}
	}
	if strings.Contains(out, "line 200\n") || len(out) > 2*maxBodyBytes+8<<10 {
		t.Errorf("the transcript has %d bytes; the long texts were not cut", len(out))
	}

	var plain strings.Builder
	if err := Transcript(&plain, snap, branch, TranscriptOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.String(), "    [cut: 7.0 KB more, in 800 lines]\n") {
		t.Error("without a CutNote the marker is not the bare one")
	}

	out = transcript(true)
	if !strings.Contains(out, "    line 999\n") || !strings.Contains(out, strings.TrimSpace(huge)) || strings.Contains(out, "[cut:") {
		t.Errorf("full transcript: %d bytes; want everything, uncut", len(out))
	}
}
