package sources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/migrate/internal/importtest"
	"github.com/sessctl/sessctl/migrate/sources"
)

// TestImportProgress: the sources that read a session from one file
// report how far they have read it, to its end, for every session they
// convert, so that a caller can show progress inside a large session.
func TestImportProgress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		source string
		stores func(root string) []string
	}{
		{"claude", homes("claude-home")},
		{"codex", homes("codex-home")},
		{"gemini", homes("gemini-home")},
		{"windsurf", func(root string) []string {
			return []string{filepath.Join(root, "handmade-cascade-json", "cascade")}
		}},
	}
	for _, c := range cases {
		src, ok := sources.ByName(c.source)
		if !ok {
			t.Fatalf("no source %s", c.source)
		}
		for _, store := range c.stores(importtest.Corpus(t, c.source)) {
			res := importtest.Import(t, src, store, migrate.ImportOptions{Cwd: "/x"})
			if len(res.Refs) == 0 {
				t.Errorf("%s: no sessions in %s", c.source, store)
			}
			for _, ref := range res.Refs {
				st, err := os.Stat(ref.Path)
				if err != nil || st.IsDir() {
					continue
				}
				got, ok := res.Read[ref.Path]
				if !ok {
					t.Errorf("%s: no progress reported for %s", c.source, ref.Path)
					continue
				}
				if got[0] != st.Size() || got[1] != st.Size() {
					t.Errorf("%s: %s: last progress %d/%d, want %d/%d", c.source, ref.Path, got[0], got[1], st.Size(), st.Size())
				}
			}
		}
	}
}

// homes returns the <case>/<name> directories of a source's corpus.
func homes(name string) func(root string) []string {
	return func(root string) []string {
		ents, _ := os.ReadDir(root)
		var out []string
		for _, e := range ents {
			if p := filepath.Join(root, e.Name(), name); e.IsDir() {
				if _, err := os.Stat(p); err == nil {
					out = append(out, p)
				}
			}
		}
		return out
	}
}
