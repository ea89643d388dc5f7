package repair_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/repair"
)

// TestWriteText checks the text of 'sessctl verify' and 'sessctl
// repair': a count of problems, at most ten findings of a kind and a
// line for the rest, and a repair's changes (the command that checks its
// output is the CLI's, see cmd/sessctl's TestRepairText).
func TestWriteText(t *testing.T) {
	t.Parallel()
	v := 3.0
	r := &repair.Report{Path: "/s.jsonl", Version: &v, Entries: 1}
	for i := range 12 {
		r.Problems = append(r.Problems, repair.Finding{Kind: "bad-json", Line: i + 2, Message: fmt.Sprintf("line %d", i+2)})
	}
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	if !strings.HasPrefix(out, "/s.jsonl: 12 problems (version 3, 1 entry)\n") || strings.Count(out, "  bad-json: line") != 10 ||
		!strings.HasSuffix(out, "  bad-json: ... and 2 more\n") {
		t.Errorf("verify text:\n%s", out)
	}
	b.Reset()
	(&repair.Report{Path: "/s.jsonl", OK: true, Entries: 2}).WriteText(&b)
	if b.String() != "/s.jsonl: ok (2 entries)\n" {
		t.Errorf("ok text %q", b.String())
	}
	b.Reset()
	outFile := "/tmp/it's fixed.jsonl"
	(&repair.Result{Path: "/s.jsonl", Output: &outFile, Entries: 1, Dropped: 2, Changes: []repair.Finding{{Kind: "dropped-line", Line: 3, Message: "dropped"}}}).WriteText(&b)
	want := "/s.jsonl -> /tmp/it's fixed.jsonl\n  line 3: dropped\n1 entry kept, 2 lines dropped; the original is unchanged.\n"
	if b.String() != want {
		t.Errorf("repair text\n%s\nwant\n%s", b.String(), want)
	}
}
