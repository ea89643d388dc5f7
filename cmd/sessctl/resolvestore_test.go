package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestResolveInStore checks the names people give a session: an id
// prefix looked up in pi's store (PI_CODING_AGENT_DIR), a path used as
// is, a directory store, and "agentuse", which holds no session files.
func TestResolveInStore(t *testing.T) {
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{AgentDir: agent, Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []message.Message{message.NewUser("q", time.UnixMilli(1)),
		message.NewAssistant("", "p", "m", nil, message.Usage{}, message.StopStop, time.UnixMilli(2))} {
		if _, err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	file, id := s.SessionFile(), s.Header().ID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if dir, err := storeRoot("pi"); err != nil || dir != filepath.Join(agent, "sessions") {
		t.Errorf("storeRoot(pi) = %q, %v", dir, err)
	}
	for _, tc := range []struct{ store, name string }{
		{"pi", id[:8]},
		{"", id},
		{filepath.Join(agent, "sessions"), id[:8]},
		{"agentuse", file},
	} {
		got, err := resolveSession(tc.store, tc.name)
		if err != nil || !sameFile(got, file) {
			t.Errorf("resolveSession(%q, %q) = %q, %v; want %s", tc.store, tc.name, got, err, file)
		}
	}
	if _, err := resolveSession("agentuse", id[:8]); err == nil {
		t.Error("an id in the agentuse store resolved to a session file")
	}
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
