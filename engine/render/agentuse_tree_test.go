package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// TestAgentUseTree checks the tree of AgentUse sessions: subagents drawn
// below their parent, a damaged one named by its directory, and the JSON
// listing every session after its parent.
func TestAgentUseTree(t *testing.T) {
	t.Parallel()
	c1 := &agentuse.Info{ID: "C1", AgentID: "helper", Status: "done"}
	c2 := &agentuse.Info{ID: "C2", AgentDir: "C2-x", Err: errors.New("bad")}
	top := &agentuse.Info{ID: "T", AgentName: "main", Status: "running", Children: []*agentuse.Info{c1, c2}}
	var b strings.Builder
	if err := AgentUseTree(&b, []*agentuse.Info{top}); err != nil {
		t.Fatal(err)
	}
	want := "session T  main  running\n" +
		"├─ session C1  helper  done\n" +
		"└─ session C2  C2-x  damaged\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	AgentUseTreeJSON(&b, []*agentuse.Info{top})
	out := b.String()
	if i, j, k := strings.Index(out, `"id":"T"`), strings.Index(out, `"id":"C1"`), strings.Index(out, `"id":"C2"`); i < 0 || !(i < j && j < k) {
		t.Errorf("JSON not in tree order:\n%s", out)
	}
}
