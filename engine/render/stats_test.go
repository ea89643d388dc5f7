package render

import (
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/stats"
)

// TestStatsText checks the tables of 'sessctl stats': the file and
// branch columns side by side, entry types and roles of either, and a
// model table that says when there is no assistant message.
func TestStatsText(t *testing.T) {
	t.Parallel()
	all, branch := stats.NewScope(), stats.NewScope()
	all.Entries, all.Types = 3, map[string]int{"message": 2, "label": 1}
	branch.Entries, branch.Types = 1, map[string]int{"message": 1}
	var b strings.Builder
	SessionStatsText(&b, &SessionStats{Path: "/s.jsonl", ID: "abc", All: all, Branch: branch})
	out := b.String()
	for _, want := range []string{
		"Session  abc\nFile     /s.jsonl\nLeaf     none\n\n",
		"\n                                  FILE        BRANCH\n",
		"\nentries                              3             1\n",
		"\n  label                              1             0\n",
		"\nPer model, active branch:\n  no assistant messages\n",
	} {
		if !strings.Contains("\n"+out, want) {
			t.Errorf("stats text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	StoreStatsText(&b, &StoreStats{Store: "/store", Sessions: 2, Skipped: 1, All: all})
	if !strings.HasPrefix(b.String(), "Store     /store\nSessions  2 (1 file skipped)\n\n") {
		t.Errorf("store stats:\n%s", b.String())
	}
}

// TestStoreStatsAgentUse checks the AgentUse line of a directory's
// totals, and that a count of none prints no line.
func TestStoreStatsAgentUse(t *testing.T) {
	t.Parallel()
	n := 2
	var b strings.Builder
	_ = StoreStatsText(&b, &StoreStats{Store: "/d", All: stats.NewScope(), AgentUse: &n})
	if !strings.HasSuffix(b.String(), "\nAgentUse  2 sessions below it (their usage is not counted)\n") {
		t.Errorf("text:\n%s", b.String())
	}
	n = 0
	b.Reset()
	_ = StoreStatsText(&b, &StoreStats{Store: "/d", All: stats.NewScope(), AgentUse: &n})
	if strings.Contains(b.String(), "AgentUse") {
		t.Errorf("text with no AgentUse session:\n%s", b.String())
	}
}

// TestNewSessionStats checks that a session without a name or a leaf
// reports them as null, and one with them by value.
func TestNewSessionStats(t *testing.T) {
	t.Parallel()
	all, branch := stats.NewScope(), stats.NewScope()
	s := &Session{Path: "/s.jsonl"}
	s.Header.ID = "abc"
	if rep := NewSessionStats(s, all, branch); rep.Name != nil || rep.Leaf != nil || rep.ID != "abc" || rep.All != all || rep.Branch != branch {
		t.Errorf("unnamed: %+v", rep)
	}
	s.Name, s.HasName, s.Leaf = "n", true, "l1"
	if rep := NewSessionStats(s, all, branch); rep.Name == nil || *rep.Name != "n" || rep.Leaf == nil || *rep.Leaf != "l1" {
		t.Errorf("named: %+v", rep)
	}
}
