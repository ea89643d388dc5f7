package main

import (
	"bytes"
	"testing"

	"github.com/sessctl/sessctl/engine/repair"
)

// TestRepairText: repair's text ends with the command that checks its
// output and puts it in place, the paths quoted for a shell.
func TestRepairText(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &bytes.Buffer{}}
	outFile := "/tmp/it's fixed.jsonl"
	res := &repair.Result{Path: "/s.jsonl", Output: &outFile, Entries: 1, Dropped: 2, Changes: []repair.Finding{{Kind: "dropped-line", Line: 3, Message: "dropped"}}}
	if code := writeRepairResult(e, res, false); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	want := "/s.jsonl -> /tmp/it's fixed.jsonl\n  line 3: dropped\n1 entry kept, 2 lines dropped; the original is unchanged.\n" +
		`Check it and put it in place: sessctl verify '/tmp/it'\''s fixed.jsonl' && mv '/tmp/it'\''s fixed.jsonl' /s.jsonl` + "\n"
	if out.String() != want {
		t.Errorf("repair text\n%s\nwant\n%s", out.String(), want)
	}
}
