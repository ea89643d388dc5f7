package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestWriteSession reads the sample session back: its name, cwd, label,
// the branch summary on the active branch and the prompt at its leaf, and
// the abandoned branch still in the file.
func TestWriteSession(t *testing.T) {
	ctx := context.Background()
	agentDir := filepath.Join(t.TempDir(), "agent")
	file, err := WriteSession(ctx, agentDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(file, filepath.Join(agentDir, "sessions")+string(filepath.Separator)) {
		t.Errorf("file %s is not in the store below %s", file, agentDir)
	}
	s, err := engine.OpenFile(ctx, file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if name, ok := s.Name(); !ok || name != Name || s.Cwd() != Cwd {
		t.Errorf("name %q (%v), cwd %q", name, ok, s.Cwd())
	}
	var types []string
	for _, en := range s.BranchPath("") {
		types = append(types, en.Type)
	}
	if got, want := strings.Join(types, " "), "model_change thinking_level_change message branch_summary message session_info"; got != want {
		t.Errorf("active branch %s, want %s", got, want)
	}
	labels := 0
	for _, en := range s.Entries() {
		if _, ok := s.Label(en.ID); ok {
			labels++
		}
	}
	if n := len(s.Entries()); n != 10 || labels != 1 {
		t.Errorf("%d entries, %d labelled; want 10 and 1", n, labels)
	}
}
