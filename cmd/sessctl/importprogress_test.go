package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/importer"
)

// TestImportReadProgress: on a terminal, import shows how far it has read
// a large session's source file, not only how many sessions are done.
func TestImportReadProgress(t *testing.T) {
	var term bytes.Buffer
	r := &importRun{progress: &term, source: "claude", rep: &importer.Report{Summary: importer.Summary{Sessions: 3}}}
	r.readProgress("/home/me/.claude/projects/-w/big.jsonl", 40<<20, 160<<20)
	if got, want := term.String(), "importing claude: 3 sessions; reading big.jsonl 40.0/160.0 MB"; !strings.HasSuffix(got, want) {
		t.Errorf("progress line %q, want it to end in %q", got, want)
	}
	term.Reset()
	r.readProgress("/home/me/.claude/projects/-w/big.jsonl", 160<<20, 160<<20)
	if !strings.Contains(term.String(), "160.0/160.0 MB") {
		t.Errorf("the end of a file is always shown: %q", term.String())
	}
	// Off a terminal nothing is drawn.
	(&importRun{}).readProgress("x.jsonl", 1, 2)
}
