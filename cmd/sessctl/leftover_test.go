package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// verify DIR names what a writer stopped before its first write left
// beside a session that never came to be, and passes; repair DIR removes
// it (issue 42, 4: a killed writer's .lock, .owner and temporary files
// were said nothing of).
func TestVerifyAndRepairLeftovers(t *testing.T) {
	dir := t.TempDir()
	var left []string
	for _, n := range []string{"a.jsonl.lock", "a.jsonl.owner", "a.jsonl.owner.tmp-0123456789abcdef"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * time.Minute) // no write is going on
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		left = append(left, p)
	}
	out, errOut, code := runCLI(t, "verify", dir)
	if code != exitOK || strings.Count(out, "leftover") != 3 || !strings.Contains(out, "sessctl repair") {
		t.Errorf("verify DIR: exit %d, stdout %q, stderr %q; want exit 0 and 3 leftovers", code, out, errOut)
	}
	out, _, code = runCLI(t, "verify", "--json", dir)
	if code != exitOK || strings.Count(out, `"leftover":`) != 3 {
		t.Errorf("verify --json DIR: exit %d, %q", code, out)
	}
	out, errOut, code = runCLI(t, "repair", dir)
	if code != exitOK || strings.Count(out, "removed ") != 3 {
		t.Errorf("repair DIR: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, p := range left {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
	if out, _, code := runCLI(t, "verify", dir); code != exitOK || strings.Contains(out, "leftover") {
		t.Errorf("verify after repair: exit %d, %q", code, out)
	}
}
