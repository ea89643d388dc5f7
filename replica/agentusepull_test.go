package replica_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/replica"
)

// An AgentUse session pulled onto a machine, and not touched there
// since, is in sync: the next status must not offer to push it, and a
// push must upload nothing. Before, a pull recorded it as never pushed,
// and status said "push" until a sync had uploaded nothing.
func TestAgentUsePulledIsInSync(t *testing.T) { eachBackend(t, testAgentUsePulledIsInSync) }

func testAgentUsePulledIsInSync(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	for _, m := range []*machine{a, b} {
		m.opts.AgentDir = ""
		m.opts.AgentUseDir = filepath.Join(filepath.Dir(m.agentDir), "data")
	}
	ctx := context.Background()
	root := filepath.Join(a.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "coder", Name: "coder"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	mid, err := w.AddMessage(agentuse.MessageSpec{Task: "fix it", ModelID: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddPart(mid, agentuse.TextPart("hello", w.Now())); err != nil {
		t.Fatal(err)
	}
	w.Close()
	a.run(t, "push")
	if rep := b.run(t, "pull"); pulled(rep) == 0 {
		t.Fatalf("the pull wrote nothing: %+v", rep.Sessions)
	}
	for _, s := range b.run(t, "status").Sessions {
		if s.State != "in sync" {
			t.Errorf("status after the pull: %s is %q, want \"in sync\"", s.Name, s.State)
		}
	}
	if rep := b.run(t, "push"); rep.Uploaded != 0 {
		t.Errorf("a push after the pull uploaded %d bytes", rep.Uploaded)
	}
}

func pulled(rep *replica.Report) int {
	n := 0
	for _, s := range rep.Sessions {
		n += s.Pulled
	}
	return n
}
