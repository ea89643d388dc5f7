package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrashSkipped checks that stats --all and verify DIR leave out the
// sessions 'sessctl delete' moved into the store's .trash, and that
// verify checks a .trash directory named on its own.
func TestTrashSkipped(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sessions")
	main := buildFixtures(t, store)
	trash := filepath.Join(store, ".trash")
	if err := os.MkdirAll(trash, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(trash, "deleted.jsonl"), data, 0o600))
	must(os.WriteFile(filepath.Join(trash, "damaged.jsonl"), []byte("not a session\n"), 0o600))

	out, errOut, code := runCLI(t, "stats", "--all", "--store", store)
	if code != exitOK || !strings.Contains(out, "Sessions  2\n") || errOut != "" {
		t.Errorf("stats --all: exit %d, stderr %q, stdout:\n%s\nwant the 2 sessions outside .trash", code, errOut, out)
	}
	out, errOut, code = runCLI(t, "verify", store)
	if code != exitOK || strings.Contains(out, ".trash") {
		t.Errorf("verify DIR: exit %d, stderr %q, stdout:\n%s\nwant .trash left out", code, errOut, out)
	}
	out, _, code = runCLI(t, "verify", trash)
	if code != exitCorrupt || !strings.Contains(out, "damaged.jsonl") || !strings.Contains(out, "deleted.jsonl") {
		t.Errorf("verify .trash: exit %d, stdout:\n%s\nwant both trashed files checked", code, out)
	}
}
