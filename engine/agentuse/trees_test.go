package agentuse_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// TestTrees finds the sessions of a directory above session directories
// (every top-level one, each with its subagent below it) and of one
// session directory (that session alone), and none in an empty directory.
func TestTrees(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: filepath.Join(root, "p", "session"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	parent := mustCreate(t, s, auSpec)
	if _, err := parent.CreateSubagent(t.Context(), auSpec); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, auSpec)
	var warned []error
	warn := func(err error) { warned = append(warned, err) }
	tops, err := agentuse.Trees(t.Context(), agentuse.StoreOptions{}, root, warn)
	if err != nil || len(tops) != 2 || len(warned) != 0 {
		t.Fatalf("Trees(root): %d sessions, %v, warned %v", len(tops), err, warned)
	}
	var withChild *agentuse.Info
	for _, x := range tops {
		if x.Parent != nil {
			t.Errorf("%s is a subagent, listed at the top", x.ID)
		}
		if len(x.Children) == 1 {
			withChild = x
		}
	}
	if withChild == nil {
		t.Fatalf("no session with its subagent below it: %+v", tops)
	}
	one, err := agentuse.Trees(t.Context(), agentuse.StoreOptions{}, withChild.Dir, warn)
	if err != nil || len(one) != 1 || one[0].ID != withChild.ID || len(one[0].Children) != 1 {
		t.Fatalf("Trees(%s): %+v, %v", withChild.Dir, one, err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if none, err := agentuse.Trees(t.Context(), agentuse.StoreOptions{}, empty, warn); err != nil || len(none) != 0 {
		t.Errorf("Trees(empty): %+v, %v", none, err)
	}
}
