package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/sessionfile"
)

// export -o of a session's live lock file with --force used to replace
// it: `who` then said "not locked" while the writer still ran, and a
// second writer got in. No command that writes a file it is given (export
// -o, repair -o, gen) writes to or replaces a file that belongs to a
// session, with or without --force: the error names the file and what it
// belongs to, and the file is left as it was.
func TestOutputNeverASessionsFile(t *testing.T) {
	_, cwd := mutStore(t)
	src, _ := mutSession(t, cwd)
	holdLock(t, src)
	lockBefore, err := os.Stat(sessionfile.LockPath(src))
	if err != nil {
		t.Fatal(err)
	}

	// A damaged session, for repair to have something to write.
	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	if err := os.WriteFile(torn, []byte(mustRead(t, src)+`{"type":"message","id":"half`), 0o600); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Dir(src)
	touch := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("kept\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	auDir := filepath.Join(t.TempDir(), "01JQ3Z5M8X9Y2W4V6T8R0P2N4K-build")
	if err := os.MkdirAll(filepath.Join(auDir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4M"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(auDir, "session.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyJSONL := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(emptyJSONL, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	targets := []struct {
		name, path, what string
	}{
		{"the live lock", sessionfile.LockPath(src), "the writer lock of session"},
		{"the owner record", src + ".owner", "the lock owner record of session"},
		{"a fallback lock", src + ".lock.excl", "the writer lock of session"},
		{"a migration backup", touch(filepath.Base(src) + ".v1.bak"), "a migration backup of session"},
		{"a quarantined tail", touch(filepath.Base(src) + ".torn-1772355600000"), "a quarantined torn line of session"},
		{"a temporary file", src + ".tmp-0123456789abcdef", "a temporary file of session"},
		{"an owner record's temporary file", src + ".owner.tmp-0123456789abcdef", "a temporary file of session"},
		{"an empty session file", emptyJSONL, "a session file"},
		{"an AgentUse session file", filepath.Join(auDir, "session.json"), "in AgentUse session directory"},
		{"a new file in an AgentUse message directory", filepath.Join(auDir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4M", "x.md"), "in AgentUse session directory"},
	}
	commands := []struct {
		name string
		args func(out string) []string
	}{
		{"export --force", func(out string) []string { return []string{"export", src, "-o", out, "--force"} }},
		{"repair", func(out string) []string { return []string{"repair", "-o", out, torn} }},
	}
	for _, c := range commands {
		for _, tg := range targets {
			t.Run(c.name+" to "+tg.name, func(t *testing.T) {
				before, statErr := os.ReadFile(tg.path)
				_, errOut, code := mutRun(t, "", c.args(tg.path)...)
				if code != exitFailure {
					t.Fatalf("exit %d, want %d\n%s", code, exitFailure, errOut)
				}
				if !strings.Contains(errOut, tg.path) || !strings.Contains(errOut, tg.what) {
					t.Errorf("the error does not name %s as %q:\n%s", tg.path, tg.what, errOut)
				}
				after, err := os.ReadFile(tg.path)
				if statErr != nil {
					if err == nil {
						t.Errorf("%s was created", tg.path)
					}
				} else if string(after) != string(before) {
					t.Errorf("%s changed: %q, was %q", tg.path, after, before)
				}
			})
		}
	}
	lockAfter, err := os.Stat(sessionfile.LockPath(src))
	if err != nil || !os.SameFile(lockBefore, lockAfter) {
		t.Fatalf("the lock file was replaced (%v)", err)
	}
	out, errOut, code := mutRun(t, "", "who", src)
	if code != exitOK || strings.Contains(out, "not locked") {
		t.Fatalf("who after the refused writes: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := mutRun(t, "", "label", src, "00000000", "x"); code != exitLocked {
		t.Fatalf("a second writer: exit %d, want %d\n%s", code, exitLocked, errOut)
	}
}
