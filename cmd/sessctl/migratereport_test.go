package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/migrate"
)

// TestMigrateReport checks the statuses and counts of a dry run, that
// held sessions alone make a retryable failure, and the JSON document.
func TestMigrateReport(t *testing.T) {
	r := &migrateReport{dryRun: true}
	old := migrate.FileResult{Result: migrate.Result{From: 1, To: 3, Migrated: true, Entries: 4}}
	cur := migrate.FileResult{Result: migrate.Result{From: 3, To: 3}}
	for _, tc := range []struct {
		res  migrate.FileResult
		err  error
		want string
	}{
		{old, nil, migrateStatusWould},
		{cur, nil, migrateStatusCurrent},
		{migrate.FileResult{}, fmt.Errorf("a.jsonl: %w", engine.ErrLocked), migrateStatusFailed},
	} {
		if l := r.add("a.jsonl", tc.res, tc.err); l.status != tc.want {
			t.Errorf("status %q, want %q", l.status, tc.want)
		}
	}
	if !r.onlyLocked() || r.count(migrateStatusFailed) != 1 {
		t.Errorf("one locked failure: onlyLocked %v, failed %d", r.onlyLocked(), r.count(migrateStatusFailed))
	}
	r.add("b.jsonl", migrate.FileResult{}, errors.New("bad"))
	if r.onlyLocked() {
		t.Error("a failure that is not a lock counts as locked")
	}
	got := string((&migrateReport{}).appendJSON(nil))
	if want := `{"files":[],"migrated":0,"wouldMigrate":0,"current":0,"failed":0}` + "\n"; got != want {
		t.Errorf("empty JSON %s", got)
	}
	got = string(r.appendJSON(nil))
	if want := `{"path":"a.jsonl","status":"would-migrate","from":1,"to":3,"entries":4,"malformed":0}`; len(got) < len(want) || got[10:10+len(want)] != want {
		t.Errorf("JSON %s", got)
	}
}
