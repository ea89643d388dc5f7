package importer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/migrate"
)

// TestReport checks that a Report counts sessions by status, keeps the
// error of kept and failed ones, and encodes empty lists as [].
func TestReport(t *testing.T) {
	t.Parallel()
	r := importer.NewReport(true)
	var empty bytes.Buffer
	if err := json.NewEncoder(&empty).Encode(r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(empty.String(), `"sessions":[],"skipped":[],"damaged":[],"stores":[]`) || !strings.Contains(empty.String(), `"dryRun":true`) {
		t.Errorf("empty report %s", empty.String())
	}
	s := &migrate.Imported{Source: "claude", SourceID: "a", Lines: [][]byte{[]byte("{}"), []byte("{}")}}
	r.AddStore("claude", "/c")
	for _, st := range []string{importer.StatusNew, importer.StatusNew, importer.StatusUnchanged, importer.StatusKept, importer.StatusFailed} {
		var err error
		if st == importer.StatusKept || st == importer.StatusFailed {
			err = errors.New("why " + st)
		}
		line := r.AddSession(importer.Result{Session: s, Path: "/f.jsonl", Status: st, Err: err})
		if line.Entries != 2 || line.File != "/f.jsonl" || (err != nil) != (line.Error != "") {
			t.Errorf("%s: record %+v", st, line)
		}
	}
	r.AddSkip("claude", &migrate.Skip{SourceID: "b", Reason: migrate.SkipEmpty})
	r.AddDamage(&migrate.Damage{Path: "/x", Line: 3, Err: errors.New("bad")})
	want := importer.Summary{Sessions: 5, New: 2, Unchanged: 1, Kept: 1, Failed: 1, Skipped: 1, Damaged: 1, DryRun: true}
	if r.Summary != want || len(r.Stores) != 1 || r.Damaged[0].Error != "bad" || r.Skipped[0].Reason != migrate.SkipEmpty {
		t.Errorf("report %+v; want summary %+v", r, want)
	}
}
