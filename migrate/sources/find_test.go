package sources_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// TestStores: a path given is the store; without one, the stores Find
// finds, or an error matching fs.ErrNotExist that says where it looked.
func TestStores(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	loc := migrate.Locator{Home: home, GOOS: "linux"}
	claude, _ := sources.ByName("claude")
	codex, _ := sources.ByName("codex")
	if got, err := sources.Stores(loc, codex, "/some/dir"); err != nil || len(got) != 1 || got[0].Path != "/some/dir" || got[0].Source != codex {
		t.Errorf("a path: %+v, %v", got, err)
	}
	if got, err := sources.Stores(loc, claude, ""); err != nil || len(got) != 1 || got[0].Path != filepath.Join(home, ".claude") {
		t.Errorf("claude found: %+v, %v", got, err)
	}
	_, err := sources.Stores(loc, codex, "")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no "+codex.Title()+" store found (looked in "+home) {
		t.Errorf("no codex store: %v", err)
	}
	if n, ti := sources.Names(), sources.Titles(); len(n) != len(sources.All()) || n[0] != "claude" || len(ti) != len(n) || ti[0] != claude.Title() {
		t.Errorf("Names %v, Titles %v", n, ti)
	}
}
