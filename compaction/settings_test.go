package compaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
)

// TestReadSettings checks the defaults without files, that a later file
// wins key by key, and that a damaged file is skipped with a warning.
func TestReadSettings(t *testing.T) {
	dir := t.TempDir()
	agent, project := filepath.Join(dir, "agent.json"), filepath.Join(dir, "project.json")
	write := func(p, data string) {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, warnings := ReadSettings(vfs.OS(), agent, project); got != DefaultSettings() || len(warnings) != 0 {
		t.Errorf("no files: %+v, %v; want the defaults", got, warnings)
	}
	write(agent, `{"compaction":{"reserveTokens":1000,"keepRecentTokens":2000}}`)
	write(project, `{"compaction":{"keepRecentTokens":3000}}`)
	got, warnings := ReadSettings(vfs.OS(), agent, project)
	if got.ReserveTokens != 1000 || got.KeepRecentTokens != 3000 || !got.Enabled || len(warnings) != 0 {
		t.Errorf("two files: %+v, %v; want reserve 1000, keep 3000 (the later wins)", got, warnings)
	}
	write(project, `{not json`)
	got, warnings = ReadSettings(vfs.OS(), agent, project)
	if got.KeepRecentTokens != 2000 || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "ignoring "+project) {
		t.Errorf("a damaged file: %+v, %v; want it skipped with a warning", got, warnings)
	}
	if _, warnings = ReadSettings(vfs.OS(), dir); len(warnings) != 1 {
		t.Errorf("a directory for a file: %v; want a warning", warnings)
	}
}
