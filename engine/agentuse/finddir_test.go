package agentuse_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
)

func TestFindDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := agentuse.OpenStore(ctx, agentuse.Options{SessionRoot: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, auSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir, id := w.Dir(), w.ID()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !agentuse.IsSessionDir(dir) || agentuse.IsSessionDir(root) || agentuse.IsSessionDir(filepath.Join(root, "nope")) {
		t.Errorf("IsSessionDir: a session directory, its store and a missing directory are not told apart")
	}
	names := []string{dir}
	if rel, err := filepath.Rel(mustGetwd(t), dir); err == nil {
		names = append(names, rel)
	} else if runtime.GOOS != "windows" { // where the temporary directory may be on another drive
		t.Fatal(err)
	}
	for _, name := range names {
		_, x, err := agentuse.FindDir(ctx, name)
		if err != nil || x.ID != id || x.Dir != dir {
			t.Errorf("FindDir(%q) = %+v, %v; want session %s", name, x, err, id)
		}
	}
	other := filepath.Join(root, "not-a-session")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := agentuse.FindDir(ctx, other); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("FindDir of a directory that is no session: %v, want ErrNotFound", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
