package search

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout"
)

// TestOwnMergeKeepsIndex: many small updates make the own engine merge
// its segments; the index it leaves is trusted by the next search (its
// recorded stamps are those of the files left after the merge), which
// indexes nothing again.
func TestOwnMergeKeepsIndex(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	var total int64
	x := openIndex(t, Options{Engine: EngineOwn, Progress: func(_, tot int64) { total = tot }})
	searchAll(t, x, Query{Text: "flaky", Stores: stores})
	handed := 0
	for i := range 12 {
		appendLines(t, s1, userLine(fmt.Sprintf("z%d", i), "", "2026-03-01T10:00:00.000Z", fmt.Sprintf("zebra number%d", i)))
		if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); len(got) != i+1 {
			t.Fatalf("after %d appends: %v", i+1, got)
		}
		if x.ownMerge != nil {
			// The search answered and left the merge running.
			handed++
		}
	}
	if handed == 0 {
		t.Error("no search left a merge running after its answer")
	}
	if err := x.waitOwnMerge(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(x.ownDir(), ownTextDir, "*.seg"))
	if len(segs) > 9 {
		t.Errorf("%d segments after 13 updates: not merged", len(segs))
	}
	total = 0
	if got := searchAll(t, x, Query{Text: "flaky OR zebra", Stores: stores}); len(got) != 15 {
		t.Errorf("after the merges: %d hits, want 15: %v", len(got), got)
	}
	// Searches that find nothing changed leave the index as it was: the
	// next one trusts it too. (The files' times are put back, out of the
	// window in which a file is read again whatever its stat says.)
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{s1, s2} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if got := searchAll(t, x, Query{Text: "flaky OR zebra", Stores: stores}); len(got) != 15 {
			t.Errorf("search %d after the merges: %d hits, want 15", i, len(got))
		}
		if total != 0 && i > 0 {
			t.Errorf("search %d after the merges indexed %d bytes: the index was not trusted", i, total)
		}
	}
}
