package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// sameSecondIDs are the ids of sessions created within one second, as
// UUIDv7s drawn then are: their first eight hex digits are the same.
var sameSecondIDs = []string{
	"019c8d2a-1b3c-7a00-8000-000000000001",
	"019c8d2a-1b3d-7b00-8000-000000000002",
	"019c8d2a-1b9e-7c00-8000-000000000003",
}

// TestResolveHeaderID resolves sessions created within one second in
// several cwds by unique prefixes of their header ids, with or without
// the dashes, also where the file's name carries another id.
func TestResolveHeaderID(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	st := openStore(t, engine.StoreOptions{AgentDir: agent})
	var paths []string
	for i, cwd := range []string{"/home/dev/a", "/home/dev/b", "/home/dev/c"} {
		s, err := st.Create(t.Context(), cwd, engine.CreateOptions{ID: sameSecondIDs[i]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(raw(`{"role":"user","content":"hi","timestamp":1772355600000}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(raw(benchMsg)); err != nil { // the file is written from the first reply
			t.Fatal(err)
		}
		paths = append(paths, s.SessionFile())
		s.Close()
	}
	// The third file is renamed to carry another id than its header's.
	renamed := filepath.Join(filepath.Dir(paths[2]), "2026-03-01T09-00-00-000Z_11111111-0000-7000-8000-000000000009.jsonl")
	if err := os.Rename(paths[2], renamed); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"019c8d2a-1b3c", paths[0]},
		{"019c8d2a1b3d", paths[1]}, // without the dash
		{"019C8D2A-1B3D-7B", paths[1]},
		{"019c8d2a-1b9", renamed}, // the header's id
		{sameSecondIDs[2], renamed},
		{"11111111", renamed}, // the id its name carries
	} {
		got, err := st.Resolve(t.Context(), tc.name)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	_, err := st.Resolve(t.Context(), "019c8d2a-1b")
	var amb *engine.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Candidates) != 3 {
		t.Fatalf("Resolve of a shared prefix: %v; want an *AmbiguousError of 3 sessions", err)
	}
	for i, c := range amb.Candidates {
		if c.ID != sameSecondIDs[i] {
			t.Errorf("candidate %d: %s, want the header's id %s", i, c.ID, sameSecondIDs[i])
		}
	}
}
