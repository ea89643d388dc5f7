package replica_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestReadSessionFile checks that a remote session is written into a
// file of its name with the local file's bytes, and that a name the
// remote lacks leaves nothing in the directory.
func TestReadSessionFile(t *testing.T) {
	be := &backend{}
	m := newMachine(t, be, remoteFor(t, be))
	path := m.newSession(t, "/w", 2)
	m.run(t, "push")
	dir := t.TempDir()
	got, refused, err := m.remote(t).ReadSessionFile(context.Background(), filepath.Base(path), dir)
	if err != nil || len(refused) != 0 {
		t.Fatalf("ReadSessionFile: %v, refused %v", err, refused)
	}
	if got != filepath.Join(dir, filepath.Base(path)) {
		t.Errorf("written to %s, want %s", got, filepath.Join(dir, filepath.Base(path)))
	}
	want, _ := os.ReadFile(path)
	if data, err := os.ReadFile(got); err != nil || string(data) != string(want) {
		t.Errorf("copy differs from the local file (%v)", err)
	}
	empty := t.TempDir()
	if _, _, err := m.remote(t).ReadSessionFile(context.Background(), "nope", empty); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("missing session: %v, want ErrNotFound", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("a failed read left %v", ents)
	}
}
