package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// TestAgentUseList checks the table and JSON of 'sessctl list
// --agentuse': a short id, an indented subagent, a damaged session shown
// with its directory, and null parents in JSON.
func TestAgentUseList(t *testing.T) {
	t.Parallel()
	list := []*agentuse.Info{
		{ID: "01JABCDEFGHJKMNPQRSTVWXYZ0", Dir: "/d/a", AgentDir: "a", AgentName: "coder", Model: "m1", Status: "completed"},
		{ID: "01JABCDEFGHJKMNPQRSTVWXYZ1", Dir: "/d/b", AgentDir: "b", AgentID: "helper", Nested: true, IsSubAgent: true, ParentID: "01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{ID: "01JBAD", Dir: "/d/c", AgentDir: "broken", Err: errors.New("bad session.json")},
	}
	var b strings.Builder
	AgentUseList(&b, list)
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{"CREATED", "unknown           completed  01JABCDEFGHJ  coder", "unknown           unknown    01JABCDEFGHJ    helper", "unknown           damaged    01JBAD        broken"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
		}
	}
	b.Reset()
	AgentUseListJSON(&b, list)
	var arr []map[string]any
	if err := json.Unmarshal([]byte(b.String()), &arr); err != nil || len(arr) != 3 {
		t.Fatalf("JSON %s: %v", b.String(), err)
	}
	if arr[0]["parentSessionID"] != nil || arr[1]["parentSessionID"] != list[0].ID || arr[2]["error"] != "bad session.json" {
		t.Errorf("JSON %s", b.String())
	}
	b.Reset()
	if AgentUseListJSON(&b, nil); b.String() != "[]\n" {
		t.Errorf("no sessions: %q", b.String())
	}
}
