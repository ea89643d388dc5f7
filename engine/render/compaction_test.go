package render

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/compaction"
)

// TestCompactionReport checks compact's report for people and its JSON:
// a made compaction names its entry and summary, a dry run says nothing
// was written, an unknown token count is worded, paths are quoted.
func TestCompactionReport(t *testing.T) {
	t.Parallel()
	prep := &compaction.Preparation{FirstKeptEntryID: "k1", TokensBefore: 1200, IsSplitTurn: true,
		MessagesToSummarize: make([]compaction.Message, 3)}
	res := compaction.Result{Summary: "héllo", FirstKeptEntryID: "k1", TokensBefore: 1200,
		Details: compaction.FileLists{ReadFiles: []string{"a.go", "b\nc"}}}
	o := &CompactionReport{Path: "/s.jsonl", EntryID: "e9", FirstKeptKind: "user message", Summarizer: "caller",
		Prep: prep, Result: res, Settings: compaction.Settings{KeepRecentTokens: 20000, ReserveTokens: 16384}}
	var b strings.Builder
	if err := o.Text(&b); err != nil {
		t.Fatal(err)
	}
	want := "compacted /s.jsonl\n" +
		"  entry:          e9\n" +
		"  first kept:     k1 (user message, inside a turn)\n" +
		"  tokens before:  1200\n" +
		"  summarised:     3 messages\n" +
		"  summary:        caller, 5 characters\n" +
		`  read files:     a.go, "b\nc"` + "\n" +
		"  modified files: (none)\n"
	if b.String() != want {
		t.Errorf("Text:\n%s\nwant\n%s", b.String(), want)
	}
	var j map[string]any
	if err := json.Unmarshal(o.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if j["entryId"] != "e9" || j["summary"] != "héllo" || j["summarizer"] != "caller" || j["keepRecentTokens"] != 20000.0 {
		t.Errorf("JSON = %v", j)
	}

	prep.TokensBefore = math.NaN()
	o.DryRun, o.EntryID, o.Summarizer = true, "", "dry-run"
	b.Reset()
	_ = o.Text(&b)
	if out := b.String(); !strings.HasPrefix(out, "would compact /s.jsonl (dry run, nothing written)\n") ||
		!strings.Contains(out, "tokens before:  unknown (a usage record is incomplete)") || strings.Contains(out, "summary:") {
		t.Errorf("dry run:\n%s", out)
	}
	j = nil
	if err := json.Unmarshal(o.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if j["entryId"] != nil || j["summary"] != nil {
		t.Errorf("dry run JSON = %v, want null entryId and summary", j)
	}
	if _, ok := j["requests"]; !ok {
		t.Errorf("dry run JSON has no requests: %v", j)
	}
}
