package migrate

import (
	"errors"
	"io/fs"
	"testing"
)

// TestReport checks the statuses and counts of a dry run and of a real
// one, and the JSON document.
func TestReport(t *testing.T) {
	r := &Report{DryRun: true}
	old := FileResult{Result: Result{From: 1, To: 3, Migrated: true, Entries: 4}, Backup: "a.jsonl.v1.bak"}
	cur := FileResult{Result: Result{From: 3, To: 3}}
	for _, tc := range []struct {
		res  FileResult
		err  error
		want string
	}{
		{old, nil, StatusWould},
		{cur, nil, StatusCurrent},
		{FileResult{}, errors.New("a.jsonl: session is locked"), StatusFailed},
	} {
		if l := r.Add("a.jsonl", tc.res, tc.err); l.Status != tc.want {
			t.Errorf("status %q, want %q", l.Status, tc.want)
		}
	}
	if r.Count(StatusFailed) != 1 || r.Count(StatusWould) != 1 || r.Count(StatusMigrated) != 0 || len(r.Files) != 3 {
		t.Errorf("counts: failed %d, would %d, migrated %d, %d lines", r.Count(StatusFailed), r.Count(StatusWould), r.Count(StatusMigrated), len(r.Files))
	}
	if l := (&Report{}).Add("a.jsonl", old, nil); l.Status != StatusMigrated {
		t.Errorf("not a dry run: %q", l.Status)
	}
	if got, want := string((&Report{}).AppendJSON(nil)), `{"files":[],"migrated":0,"wouldMigrate":0,"current":0,"failed":0}`+"\n"; got != want {
		t.Errorf("empty JSON %s", got)
	}
	want := `{"files":[{"path":"a.jsonl","status":"would-migrate","from":1,"to":3,"entries":4,"malformed":0,"backup":"a.jsonl.v1.bak"},` +
		`{"path":"a.jsonl","status":"current","from":3,"to":3,"entries":0,"malformed":0},` +
		`{"path":"a.jsonl","status":"failed","from":0,"to":0,"entries":0,"malformed":0,"error":"a.jsonl: session is locked"}],` +
		`"migrated":0,"wouldMigrate":1,"current":1,"failed":1}` + "\n"
	if got := string(r.AppendJSON(nil)); got != want {
		t.Errorf("JSON\n%s\nwant\n%s", got, want)
	}
}

// TestReportAddUnread: a file a walk could not read is a failure under
// the path its error names.
func TestReportAddUnread(t *testing.T) {
	r := &Report{}
	l := r.AddUnread(&fs.PathError{Op: "open", Path: "d/fifo.jsonl", Err: fs.ErrInvalid})
	if l.Path != "d/fifo.jsonl" || l.Status != StatusFailed || r.Count(StatusFailed) != 1 {
		t.Errorf("AddUnread: %+v", l)
	}
	if l := r.AddUnread(errors.New("no path")); l.Path != "" || l.Status != StatusFailed {
		t.Errorf("an error without a path: %+v", l)
	}
}
