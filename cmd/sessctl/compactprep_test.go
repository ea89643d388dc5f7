package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// compactSession is a session in memory of messages long user and
// assistant messages, their ids e0000001, e0000002, ...
func compactSession(t *testing.T, messages int) *engine.Session {
	t.Helper()
	n := 0
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: t.TempDir(), NewEntryID: func() string { n++; return fmt.Sprintf("e%07d", n) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := strings.Repeat("word ", 400)
		m, err := message.Decode(fmt.Appendf(nil, `{"role":%q,"content":[{"type":"text","text":%q}],"timestamp":%d}`, role, text, 1772355600000+i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestPrepareCompaction(t *testing.T) {
	settings := compaction.DefaultSettings()
	settings.KeepRecentTokens = 200
	if _, _, err := prepareCompaction(compactSession(t, 1), settings); !errors.Is(err, errNoMessages) {
		t.Errorf("one message: %v, want errNoMessages", err)
	}
	s := compactSession(t, 6)
	prep, kept, err := prepareCompaction(s, settings)
	if err != nil {
		t.Fatal(err)
	}
	if kept.ID != prep.FirstKeptEntryID {
		t.Errorf("kept entry %s, preparation keeps from %s", kept.ID, prep.FirstKeptEntryID)
	}
	res, no := compaction.FinishSummary(prep, "the summary"), false
	id, err := s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details, FromHook: &no})
	if err != nil {
		t.Fatal(err)
	}
	en, ok := s.Entry(id)
	if !ok || en.Type != "compaction" || !strings.Contains(string(en.Raw), `"summary":"the summary"`) || !strings.Contains(string(en.Raw), `"fromHook":false`) {
		t.Errorf("compaction entry: %s", en.Raw)
	}
	if _, _, err := prepareCompaction(s, settings); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("right after a compaction: %v, want ErrAlreadyCompacted", err)
	}
}

func TestCompactionSettings(t *testing.T) {
	agentDir := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agentDir)
	cwd := t.TempDir()
	write := func(path, data string) { testenv.WriteFile(t, path, data) }
	def := compaction.DefaultSettings()
	if got, warnings := compactionSettings(layout.AgentPi, cwd); got != def || len(warnings) != 0 {
		t.Errorf("no settings files: %+v, %v; want the defaults", got, warnings)
	}
	write(filepath.Join(agentDir, "settings.json"), `{"compaction":{"reserveTokens":1000,"keepRecentTokens":2000}}`)
	write(filepath.Join(cwd, ".pi", "settings.json"), `{"compaction":{"keepRecentTokens":3000}}`)
	got, warnings := compactionSettings(layout.AgentPi, cwd)
	if got.ReserveTokens != 1000 || got.KeepRecentTokens != 3000 || len(warnings) != 0 {
		t.Errorf("agent and project settings: %+v, %v; want reserve 1000, keep 3000 (the project wins)", got, warnings)
	}
	write(filepath.Join(cwd, ".pi", "settings.json"), `{not json`)
	got, warnings = compactionSettings(layout.AgentPi, cwd)
	if got.KeepRecentTokens != 2000 || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "ignoring ") {
		t.Errorf("a bad project file: %+v, %v; want it skipped with a warning", got, warnings)
	}
}
