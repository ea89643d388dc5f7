package replica_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/replica"
)

// TestReportProblemsWording checks the lines a run's problems are worded
// in and the counts of failed sessions and refused lines.
func TestReportProblemsWording(t *testing.T) {
	r := &replica.Report{Sessions: []replica.SessionReport{
		{Kind: replica.KindPi, Name: "a", State: "failed", Err: errors.New("boom")},
		{Kind: replica.KindPi, Name: "b", Conflicts: []replica.Conflict{{ID: "e1", Copies: []string{"b.conflict.jsonl"}}}},
		{Kind: replica.KindAgentUse, Name: "c", Conflicts: []replica.Conflict{{ID: "m/message.json", Copies: []string{"c2"}}}},
	}}
	p := r.Problems()
	want := []string{
		"pi a: boom",
		"pi b: entry e1 differs on the two sides; both kept (as b.conflict.jsonl)",
		"agentuse c: file m/message.json differs on the two sides; both kept (the remote one as c2)",
	}
	if strings.Join(p.Lines, "\n") != strings.Join(want, "\n") || p.Failed != 1 || p.Refused != 0 {
		t.Errorf("Problems = %q, %d failed, %d refused; want %q, 1, 0", p.Lines, p.Failed, p.Refused, want)
	}
}

// TestReportWriteText checks the text report: moved sessions, the
// summary line with requests and sizes, a prune's collected objects.
func TestReportWriteText(t *testing.T) {
	r := &replica.Report{
		Sessions: []replica.SessionReport{
			{Kind: "pi", Name: "a", Path: "/s/a.jsonl", State: "pushed", Pushed: 3},
			{Kind: "pi", Name: "b", State: "in sync"},
			{Kind: "pi", Name: "c", State: "new remote"},
		},
		Requests: 5, RequestKinds: replica.RequestCounts{Get: 3, Put: 2},
		Uploaded: 2048, Downloaded: 10,
		Collected: []string{"x", "y"}, CollectedBytes: 3 << 20,
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, "push", nil); err != nil {
		t.Fatal(err)
	}
	want := "pushed       /s/a.jsonl (3 up)\n" +
		"push: 1 in sync, 1 pushed, 1 new remote; 5 requests (3 GET, 2 PUT), 2.0 KB up, 10 B down\n"
	if b.String() != want {
		t.Errorf("push:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	_ = r.WriteText(&b, "prune --dry-run", nil)
	if !strings.Contains(b.String(), ", 2 objects to collect; nothing deleted (3.0 MB); ") {
		t.Errorf("prune --dry-run: %q", b.String())
	}
	b.Reset()
	_ = r.WriteText(&b, "status", nil)
	if !strings.Contains(b.String(), "new remote   c\n") {
		t.Errorf("status leaves out a new session: %q", b.String())
	}
}

// TestReportWriteJSON checks that the JSON carries the replicators given.
func TestReportWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := (&replica.Report{}).WriteJSON(&b, []replica.ReplicatorStats{{Host: "h", PID: 7}}); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Replicators []struct{ PID int } `json:"replicators"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil || len(j.Replicators) != 1 || j.Replicators[0].PID != 7 {
		t.Errorf("WriteJSON = %s (%v)", b.String(), err)
	}
}
