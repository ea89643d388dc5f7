package render

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpen opens one session file whole and as a View: both see its two
// messages on the branch to its leaf, and render the same transcript;
// only the whole one has a tree, only the View one a View.
func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSession(t, dir, "hello there", time.Now())
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if len(files) != 1 {
		files, _ = filepath.Glob(filepath.Join(dir, "*.jsonl"))
	}
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	var texts []string
	for _, whole := range []bool{true, false} {
		sv, err := Open(t.Context(), files[0], whole)
		if err != nil {
			t.Fatal(err)
		}
		branch, err := sv.BranchTo("")
		if err != nil || len(branch) != 2 || sv.Path != files[0] {
			t.Fatalf("whole %v: branch of %d, %v", whole, len(branch), err)
		}
		if (sv.Tree() != nil) != whole || (sv.View() == nil) != whole {
			t.Errorf("whole %v: tree %v, view %v", whole, sv.Tree(), sv.View())
		}
		var b strings.Builder
		if err := Transcript(&b, sv, branch, TranscriptOptions{}); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b.String())
		if err := sv.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(texts[0], "hello there") || texts[0] != texts[1] {
		t.Errorf("transcripts differ:\n%s\n---\n%s", texts[0], texts[1])
	}
	if _, err := Open(t.Context(), filepath.Join(dir, "missing.jsonl"), false); err == nil {
		t.Error("Open of a missing file: no error")
	}
	if _, err := (&Session{}).BranchTo(""); err == nil {
		t.Error("BranchTo of a session Open did not open: no error")
	}
}
