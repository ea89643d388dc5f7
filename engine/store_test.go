package engine_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestResolveInStore checks the names people give a session: an id
// prefix looked up in pi's store (PI_CODING_AGENT_DIR), a path used as
// is, a directory store, and "agentuse", which holds no session files.
func TestResolveInStore(t *testing.T) {
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	s, err := engine.Create(t.Context(), "/p", engine.Options{AgentDir: agent, Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`{"role":"user","content":"q","timestamp":1}`, `{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}`} {
		if _, err := s.AppendMessage(json.RawMessage(m)); err != nil {
			t.Fatal(err)
		}
	}
	file, id := s.SessionFile(), s.Header().ID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if dir, err := engine.StoreDir("pi"); err != nil || dir != filepath.Join(agent, "sessions") {
		t.Errorf("StoreDir(pi) = %q, %v", dir, err)
	}
	for _, tc := range []struct{ store, name string }{
		{"pi", id[:8]},
		{"", id},
		{filepath.Join(agent, "sessions"), id[:8]},
		{"agentuse", file},
	} {
		got, err := engine.ResolveInStore(tc.store, tc.name)
		if err != nil || !sameFile(got, file) {
			t.Errorf("ResolveInStore(%q, %q) = %q, %v; want %s", tc.store, tc.name, got, err, file)
		}
	}
	if _, err := engine.ResolveInStore("agentuse", id[:8]); err == nil {
		t.Error("an id in the agentuse store resolved to a session file")
	}
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// TestBranchTo checks the branch to an entry named by a prefix, the
// branch of the leaf, and none for a session without entries.
func TestBranchTo(t *testing.T) {
	s := sessionWithIDs(t, "aaaa1111", "bbbb2222", "cccc3333")
	if b, err := s.BranchTo("bbbb"); err != nil || len(b) != 2 || b[1].ID != "bbbb2222" {
		t.Errorf("BranchTo(bbbb) = %d entries, %v", len(b), err)
	}
	if b, err := s.BranchTo(""); err != nil || len(b) != 3 {
		t.Errorf("BranchTo(\"\") = %d entries, %v", len(b), err)
	}
	if _, err := s.BranchTo("zz"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("BranchTo(zz): %v", err)
	}
	if b, err := engine.InMemory("/p", engine.Options{}).BranchTo(""); b != nil || err != nil {
		t.Errorf("no entries: %v, %v", b, err)
	}
}
