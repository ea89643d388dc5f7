//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unreadableStore makes a store with a readable directory (open/a.jsonl)
// and one the CLI may not read (private/b.jsonl), and returns a way to
// run the CLI that cannot read private: as the user nobody when the test
// runs as root (who reads everything), in-process otherwise.
func unreadableStore(t *testing.T) (run func(args ...string) (string, string, int), store, private string) {
	t.Helper()
	var base string
	if os.Geteuid() == 0 {
		base = asUserDir(t)
		run = asNobody(t, base)
	} else {
		base = t.TempDir()
		run = func(args ...string) (string, string, int) { return sessctl(t, args...) }
	}
	store = filepath.Join(base, "store")
	open := filepath.Join(store, "open")
	private = filepath.Join(store, "private")
	listSession(t, filepath.Join(open, "a.jsonl"), "dddd0001", "readable words")
	listSession(t, filepath.Join(private, "b.jsonl"), "eeee0001", "hidden words")
	for _, d := range []string{store, open} {
		noErr(t, os.Chmod(d, 0o755))
	}
	noErr(t, os.Chmod(filepath.Join(open, "a.jsonl"), 0o644))
	if os.Geteuid() == 0 {
		noErr(t, os.Chmod(private, 0o700)) // root's: nobody may not enter
	} else {
		noErr(t, os.Chmod(private, 0))
		t.Cleanup(func() { os.Chmod(private, 0o700) })
	}
	return run, store, private
}

// TestUnreadableDirectoryIsNotOK: verify DIR and stats --all over a store
// with a directory they cannot read name it on stderr and do not exit 0,
// as list and search do; verify still says what it found in the files it
// read, and damage found outranks what could not be read (exit 4).
func TestUnreadableDirectoryIsNotOK(t *testing.T) {
	run, store, private := unreadableStore(t)
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"verify", store}, exitFailure, "a.jsonl: ok"},
		{[]string{"verify", "--json", store}, exitFailure, `"ok":true`},
		{[]string{"stats", "--all", "--store", store}, exitFailure, "Sessions  1"},
		{[]string{"list", "--store", store}, exitFailure, "readable words"},
		{[]string{"search", "--no-index", "--store", store, "words"}, exitFailure, "readable words"},
	}
	for _, c := range cases {
		out, errOut, code := run(c.args...)
		name := strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, c.code, errOut)
		}
		if !strings.Contains(errOut, private) || !strings.Contains(errOut, "permission denied") {
			t.Errorf("%s: stderr %q does not report %s as unreadable", name, errOut, private)
		}
		if !strings.Contains(out, c.out) {
			t.Errorf("%s: stdout %q, want %q in it", name, out, c.out)
		}
	}

	// Damage found in what was read is exit 4 still.
	bad := filepath.Join(store, "open", "bad.jsonl")
	noErr(t, os.WriteFile(bad, []byte("not json\n"), 0o644))
	if _, errOut, code := run("verify", store); code != exitCorrupt || !strings.Contains(errOut, private) {
		t.Errorf("verify with a damaged file: exit %d, want %d; stderr %q", code, exitCorrupt, errOut)
	}
}
