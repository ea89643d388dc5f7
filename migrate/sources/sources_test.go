package sources

import (
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
)

// TestDetect checks that each corpus store is recognised by its own
// importer only.
func TestDetect(t *testing.T) {
	root := importtest.Corpus(t)
	stores := map[string]string{
		"claude":   "claude/hier-subagent-2.1.97/claude-home",
		"codex":    "codex/cli-0.98.0/codex-home",
		"gemini":   "gemini/jsonl-2026-04/gemini-home",
		"cursor":   "cursor/handmade-store-db/cursor-home",
		"windsurf": "windsurf/handmade-cascade-json/cascade",
		"agsh":     "agsh/handmade-v0.1.0-schema/agsh-data",
	}
	for name, dir := range stores {
		for _, src := range All() {
			got := src.Detect(filepath.Join(root, dir))
			if got != (src.Name() == name) {
				t.Errorf("%s.Detect(%s) = %v", src.Name(), dir, got)
			}
		}
	}
	if _, ok := ByName("opencode"); !ok {
		t.Error("no opencode")
	}
	for _, src := range All() {
		if len(src.Locations(migrate.Locator{Home: "/h", GOOS: "linux"})) == 0 {
			t.Errorf("%s has no default location", src.Name())
		}
	}
}
