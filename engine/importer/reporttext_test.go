package importer_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/migrate"
)

// TestReportText checks the table lines and the summary line of an
// import, for people: counts by status, skips, damage, a dry run.
func TestReportText(t *testing.T) {
	r := importer.NewReport(true)
	r.AddStore("claude", "/c")
	line := r.AddSession(importer.Result{Session: &migrate.Imported{Source: "claude", SourceID: "s\x1b1"}, Path: "/p/s1.jsonl", Status: importer.StatusNew})
	if got, want := line.Text(), `claude   "s\u001b1"                           new           0 entries  /p/s1.jsonl`; got != want {
		t.Errorf("session line\n%q, want\n%q", got, want)
	}
	r.AddSkip("codex", &migrate.Skip{SourceID: "x", Path: "/r/x.jsonl", Reason: "no messages"})
	if got, want := r.Skipped[0].Text(), "codex    x                                    skipped   no messages  /r/x.jsonl"; got != want {
		t.Errorf("skip line\n%q, want\n%q", got, want)
	}
	r.Summary.Damaged = 2
	var b bytes.Buffer
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := "would import 1 session from 1 store: 1 new, 0 updated, 0 unchanged, 1 skipped (nothing to import); 2 damaged source lines or files skipped (dry run: nothing written)\n"
	if b.String() != want {
		t.Errorf("summary\n%q, want\n%q", b.String(), want)
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var j importer.Report
	if err := json.Unmarshal(b.Bytes(), &j); err != nil || len(j.Sessions) != 1 || !j.Summary.DryRun || !strings.Contains(b.String(), "\n  \"sessions\"") {
		t.Errorf("WriteJSON = %s (%v)", b.String(), err)
	}
}
