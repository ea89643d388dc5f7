package agentuse_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestAgentUseFind checks that Find resolves a session directory in a
// store beside it, whatever store the options name, and an id prefix in
// the options' store; and IsSessionDir tells a session directory from
// its store and a missing directory.
func TestAgentUseFind(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
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
	_ = st.Close()
	if !agentuse.IsSessionDir(nil, dir) || agentuse.IsSessionDir(vfs.OS(), root) || agentuse.IsSessionDir(nil, filepath.Join(root, "nope")) {
		t.Errorf("IsSessionDir does not tell a session directory from its store and a missing one")
	}
	elsewhere := agentuse.StoreOptions{Dir: filepath.Join(t.TempDir(), "other")}
	if err := os.MkdirAll(elsewhere.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o   agentuse.StoreOptions
		arg string
	}{{elsewhere, dir}, {agentuse.StoreOptions{Dir: root}, id[:12]}} {
		fst, x, err := agentuse.Find(ctx, c.o, c.arg)
		if err != nil || x.ID != id || x.Dir != dir {
			t.Errorf("Find(%q) = %+v, %v; want session %s", c.arg, x, err, id)
			continue
		}
		_ = fst.Close()
	}
	if _, _, err := agentuse.Find(ctx, elsewhere, id); err == nil {
		t.Errorf("Find of an id in a store that lacks it succeeded")
	}
}

// TestFindRead reads a session named by its directory and by an id
// prefix, with its message, and fails for an id its store lacks.
func TestFindRead(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	w := mustCreate(t, st, auSpec)
	mustMessage(t, w)
	dir, id := w.Dir(), w.ID()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		o   agentuse.StoreOptions
		arg string
	}{{agentuse.StoreOptions{Dir: t.TempDir()}, dir}, {agentuse.StoreOptions{Dir: root}, id[:12]}} {
		c, err := agentuse.FindRead(ctx, o.o, o.arg)
		if err != nil || c.Info.ID != id || len(c.Messages) != 1 {
			t.Errorf("FindRead(%q): %+v, %v", o.arg, c, err)
		}
	}
	if _, err := agentuse.FindRead(ctx, agentuse.StoreOptions{Dir: t.TempDir()}, id); err == nil {
		t.Error("FindRead of an id in a store that lacks it succeeded")
	}
}
