package agentuse

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLocaleCompare checks localeCompare against the order Node 20's
// String.prototype.localeCompare gives (AgentUse's tie-breaker for
// children, messages and parts).
func TestLocaleCompare(t *testing.T) {
	t.Parallel()
	want := []string{"01M7ZXJ0B9NH7FQE1AXR815054", "01M7ZXJ0BZ49YSKR706YJH13T0", "a", "A", "a_1", "a-1", "a.1", "a~",
		"a$", "a1", "ab", "aB", "Ab", "agents reviewer", "agents_reviewer", "agents-reviewer", "agents/a", "Agents/b",
		"agents/reviewer", "agents/Reviewer", "agentsreviewer", "x;y", "x:y", "x[y", "x{y", "x@y"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		got := slices.Clone(want)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, localeCompare)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("order (-node +got):\n%s", diff)
		}
	}
	for _, s := range want {
		if localeCompare(s, s) != 0 {
			t.Errorf("localeCompare(%q, %q) != 0", s, s)
		}
	}
}
