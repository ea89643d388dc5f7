package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestForkRefusesNewerVersion checks that neither fork writes entries of
// a format version it does not know under a version 3 header: both fail
// with ErrUnsupportedVersion and write nothing.
func TestForkRefusesNewerVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "v4.jsonl")
	data := `{"type":"session","version":4,"id":"s4","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(src, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	st := openStore(t, engine.StoreOptions{Dir: out})
	_, err := st.Fork(t.Context(), src, engine.ForkOptions{Cwd: "/p", Dir: out})
	if !errors.Is(err, engine.ErrUnsupportedVersion) {
		t.Errorf("Fork (every entry) of a version 4 file: %v, want ErrUnsupportedVersion", err)
	}
	_, err = st.Fork(t.Context(), src, engine.ForkOptions{At: "a1", Dir: out})
	if !errors.Is(err, engine.ErrUnsupportedVersion) {
		t.Errorf("Fork (a branch) of a version 4 file: %v, want ErrUnsupportedVersion", err)
	}
	if names, _ := os.ReadDir(out); len(names) != 0 {
		t.Errorf("a refused fork wrote %v", names)
	}
	if got, _ := os.ReadFile(src); string(got) != data {
		t.Errorf("the source changed")
	}
}
