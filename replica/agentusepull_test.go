package replica_test

import (
	"testing"

	"github.com/sessctl/sessctl/replica"
)

// An AgentUse session pulled onto a machine, and not touched there
// since, is in sync: the next status must not offer to push it, and a
// push must upload nothing. Before, a pull recorded it as never pushed,
// and status said "push" until a sync had uploaded nothing.
func TestAgentUsePulledIsInSync(t *testing.T) { eachBackend(t, testAgentUsePulledIsInSync) }

func testAgentUsePulledIsInSync(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := auMachine(t, be, remote), auMachine(t, be, remote)
	auSession(t, a)
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
