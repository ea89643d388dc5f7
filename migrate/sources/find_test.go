package sources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/sources"
)

// TestFind looks in a home with only a Claude Code store: Find returns
// that store and every location it looked in, one per source at least.
func TestFind(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	loc := migrate.Locator{Home: home, GOOS: "linux"}
	found, looked := sources.Find(loc, sources.All()...)
	if len(found) != 1 || found[0].Source.Name() != "claude" || found[0].Path != filepath.Join(home, ".claude") {
		t.Errorf("found %+v; want the Claude Code home only", found)
	}
	if len(looked) < len(sources.All()) {
		t.Errorf("looked in %v; want every source's locations", looked)
	}
	codex, _ := sources.ByName("codex")
	if found, looked := sources.Find(loc, codex); len(found) != 0 || len(looked) == 0 {
		t.Errorf("codex: found %+v, looked in %v", found, looked)
	}
}
