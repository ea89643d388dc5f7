package agentuse_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestAgentUseCount checks that Count counts every session, subagents
// included, passes what cannot be read to skip and goes on, and ends
// with ctx's error once ctx is done.
func TestAgentUseCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "session")
	ffs := vfstest.NewFaultFS(vfs.OS())
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, FS: ffs, Sync: agentuse.SyncNone,
		NewID: idQueue(t, "01M7ZXJ0KC9S183XADC88B6A01", "01M7ZXJ0KC9S183XADC88B6B01", "01M7ZXJ0KC9S183XADC88B6C01")})
	if err != nil {
		t.Fatal(err)
	}
	a := mustCreate(t, st, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "a", Name: "a"}, Model: "p:m"})
	b, err := a.CreateSubagent(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "b", Name: "b"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	mustCreate(t, st, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "c", Name: "c"}, Model: "p:m"})
	broken := filepath.Join(root, "zz-broken")
	if err := os.MkdirAll(broken, 0o700); err != nil {
		t.Fatal(err)
	}
	ffs.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool { return p == broken }})
	var skipped []error
	n, err := st.Count(ctx, func(err error) { skipped = append(skipped, err) })
	if err != nil || n != 3 || len(skipped) != 1 {
		t.Errorf("Count = %d, %v, skipped %v; want 3 sessions, 1 skipped", n, err, skipped)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Count(done, func(err error) { t.Errorf("skip %v after ctx done", err) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Count after ctx done: %v, want context.Canceled", err)
	}
}
