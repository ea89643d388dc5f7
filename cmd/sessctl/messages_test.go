package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/importer"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/replica"
)

// TestSyncMessages checks sync's words: the number of failed sessions
// once, with its noun in the right number, and the copies a conflict
// kept named (or no claim of copies when none were kept).
func TestSyncMessages(t *testing.T) {
	rep := &replica.Report{Sessions: []replica.SessionReport{
		{Kind: replica.KindPi, Name: "a", State: "failed", Err: errors.New("boom")},
		{Kind: replica.KindPi, Name: "b", State: "failed", Err: errors.New("boom")},
		{Kind: replica.KindPi, Name: "c", State: "failed", Err: errors.New("boom")},
		{Kind: replica.KindPi, Name: "d", State: "failed", Err: errors.New("boom")},
		{Kind: replica.KindPi, Name: "e", State: "pulled", Pulled: 1, Conflicts: []replica.Conflict{
			{ID: "c0ffee00", Copies: []string{"c0ffee00-1a2b", "c0ffee00-3c4d"}},
			{ID: "deadbeef"},
		}},
		{Kind: replica.KindAgentUse, Name: "f", State: "pulled", Pulled: 1, Conflicts: []replica.Conflict{
			{ID: "session.json", Copies: []string{"session.json.sync-conflict-0123abcd"}},
		}},
	}, Requests: 1}
	var out, errOut bytes.Buffer
	code := reportSync(&env{stdout: &out, stderr: &errOut, name: "sync"}, "pull", rep, nil, false)
	for _, want := range []string{
		"sessctl: sync: pi e: entry c0ffee00 differs on the two sides; both kept (as c0ffee00-1a2b, c0ffee00-3c4d)\n",
		"sessctl: sync: pi e: entry deadbeef differs on the two sides\n",
		"sessctl: sync: agentuse f: file session.json differs on the two sides; both kept (the remote one as session.json.sync-conflict-0123abcd)\n",
		"hint: 4 sessions failed; run again",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if !strings.HasSuffix(out.String(), "pull: 2 pulled, 4 failed; 1 request, 0 B up, 0 B down\n") {
		t.Errorf("stdout:\n%s", out.String())
	}
	if code != exitFailure || strings.Contains(errOut.String(), "(as )") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut.String())
	}
	errOut.Reset()
	reportSync(&env{stdout: &out, stderr: &errOut, name: "sync"}, "push", &replica.Report{Sessions: rep.Sessions[:1]}, nil, true)
	if !strings.Contains(errOut.String(), "hint: 1 session failed;") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// TestImportProgressWords: the progress line and the summary count one
// session, or one damaged line, in the singular.
func TestImportProgressWords(t *testing.T) {
	var term, out bytes.Buffer
	r := &importRun{e: &env{stdout: &out, stderr: &bytes.Buffer{}, name: "import"}, progress: &term,
		out: bufio.NewWriter(&out), rep: importer.NewReport(false)}
	r.write(importer.Result{Session: &migrate.Imported{Source: "claude", SourceID: "s1"}, Path: "/p/s1.jsonl", Status: importer.StatusNew})
	if got := term.String(); !strings.HasSuffix(got, "importing claude: 1 session") {
		t.Errorf("progress %q", got)
	}
	r.source = "claude"
	r.readProgress("/home/me/big.jsonl", 1<<20, 2<<20)
	if got := term.String(); !strings.Contains(got, "importing claude: 1 session; reading big.jsonl") {
		t.Errorf("progress %q", got)
	}
	r.rep.Summary.Damaged = 1
	r.printSummary()
	r.out.Flush()
	if !strings.Contains(out.String(), "; 1 damaged source line or file skipped") {
		t.Errorf("summary:\n%s", out.String())
	}
}

// TestSingularCounts: one file, one entry, one line are said so by
// migrate, verify and gen.
func TestSingularCounts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.jsonl")
	data := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\r\n" +
		`{"type":"odd","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z"}` + "\n"
	if err := os.WriteFile(src, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", src}, "1 file: 0 migrated, 0 would be migrated, 1 already version 3, 0 failed\n"},
		{[]string{"verify", src}, "  note: crlf: 1 line ends in CRLF\n"},
		{[]string{"verify", src}, "  note: unknown-type: 1 entry of unknown type \"odd\", first on line 2"},
	} {
		out, errOut, code := runCLI(t, tc.args...)
		if code != exitOK || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, stdout lacks %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}
