package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

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
