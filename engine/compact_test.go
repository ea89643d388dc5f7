package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

func compactSession(t *testing.T, messages int) *engine.Session {
	t.Helper()
	n := 0
	s := engine.InMemory("/p", engine.Options{NewEntryID: func() string { n++; return fmt.Sprintf("e%07d", n) }})
	for i := range messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := strings.Repeat("word ", 400)
		if _, err := s.AppendMessage([]byte(fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":%q}],"timestamp":%d}`, role, text, 1772355600000+i))); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestPrepareCompaction(t *testing.T) {
	settings := compaction.DefaultSettings()
	settings.KeepRecentTokens = 200
	if _, _, err := compactSession(t, 1).PrepareCompaction(settings); !errors.Is(err, engine.ErrNoMessages) {
		t.Errorf("one message: %v, want ErrNoMessages", err)
	}
	s := compactSession(t, 6)
	prep, kept, err := s.PrepareCompaction(settings)
	if err != nil {
		t.Fatal(err)
	}
	if kept.ID != prep.FirstKeptEntryID {
		t.Errorf("kept entry %s, preparation keeps from %s", kept.ID, prep.FirstKeptEntryID)
	}
	id, err := s.AppendCompactionResult(compaction.FinishSummary(prep, "the summary"))
	if err != nil {
		t.Fatal(err)
	}
	en, ok := s.Entry(id)
	if !ok || en.Type != "compaction" || !strings.Contains(string(en.Raw), `"summary":"the summary"`) || !strings.Contains(string(en.Raw), `"fromHook":false`) {
		t.Errorf("compaction entry: %s", en.Raw)
	}
	if _, _, err := s.PrepareCompaction(settings); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("right after a compaction: %v, want ErrAlreadyCompacted", err)
	}
}

func TestSummarizeBranch(t *testing.T) {
	s := compactSession(t, 4)
	// Moving to the leaf abandons nothing; moving to the first entry
	// abandons the rest.
	if _, ok, err := s.SummarizeBranch(context.Background(), "e0000004", compaction.Offline{}, ""); ok || err != nil {
		t.Errorf("to the leaf itself: ok %v, %v; want nothing to summarise", ok, err)
	}
	res, ok, err := s.SummarizeBranch(context.Background(), "e0000001", compaction.Offline{}, "")
	if !ok || err != nil || res.Summary == "" {
		t.Errorf("to the first entry: %+v, ok %v, %v; want a summary", res, ok, err)
	}
}

func TestCompactionSettings(t *testing.T) {
	agentDir := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agentDir)
	cwd := t.TempDir()
	write := func(path, data string) { testenv.WriteFile(t, path, data) }
	def := compaction.DefaultSettings()
	if got, warnings := engine.CompactionSettings(layout.AgentPi, cwd); got != def || len(warnings) != 0 {
		t.Errorf("no settings files: %+v, %v; want the defaults", got, warnings)
	}
	write(filepath.Join(agentDir, "settings.json"), `{"compaction":{"reserveTokens":1000,"keepRecentTokens":2000}}`)
	write(filepath.Join(cwd, ".pi", "settings.json"), `{"compaction":{"keepRecentTokens":3000}}`)
	got, warnings := engine.CompactionSettings(layout.AgentPi, cwd)
	if got.ReserveTokens != 1000 || got.KeepRecentTokens != 3000 || len(warnings) != 0 {
		t.Errorf("agent and project settings: %+v, %v; want reserve 1000, keep 3000 (the project wins)", got, warnings)
	}
	write(filepath.Join(cwd, ".pi", "settings.json"), `{not json`)
	got, warnings = engine.CompactionSettings(layout.AgentPi, cwd)
	if got.KeepRecentTokens != 2000 || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "ignoring ") {
		t.Errorf("a bad project file: %+v, %v; want it skipped with a warning", got, warnings)
	}
}
