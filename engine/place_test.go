package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
)

// TestOpenPlace checks that a place opens the store it names: pi's and
// indusagi's agent stores by their sessions directory, any other place
// as a store on its root.
func TestOpenPlace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	for _, p := range []layout.Place{
		{Name: layout.PlacePi, Format: layout.FormatJSONL, Root: filepath.Join(base, "pi", "agent", "sessions")},
		{Name: layout.PlaceIndusagi, Format: layout.FormatJSONL, Root: filepath.Join(base, "indusagi", "agent", "sessions")},
		{Name: filepath.Join(base, "d"), Format: layout.FormatJSONL, Root: filepath.Join(base, "d")},
	} {
		st, err := engine.OpenPlace(context.Background(), p, engine.StoreOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if st.Dir() != p.Root {
			t.Errorf("%s: store in %s, want %s", p.Name, st.Dir(), p.Root)
		}
		// An agent's store keeps a directory per cwd; a directory's store
		// its sessions in the directory.
		s, err := st.Create(context.Background(), "/w", engine.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		want := p.Root
		if p.Name == layout.PlacePi || p.Name == layout.PlaceIndusagi {
			want = filepath.Join(p.Root, layout.CwdDirName("/w"))
		}
		if got := filepath.Dir(s.SessionFile()); got != want {
			t.Errorf("%s: session created in %s, want %s", p.Name, got, want)
		}
		_ = s.Close()
	}
}
