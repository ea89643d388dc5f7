//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listSession writes a small valid session whose first message is text.
func listSession(t *testing.T, path, id, text string) {
	t.Helper()
	noErr(t, os.MkdirAll(filepath.Dir(path), 0o700))
	noErr(t, os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"`+id+`","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"+
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"`+text+`","timestamp":1}}`+"\n"), 0o600))
}

// TestListStoresAndErrors: --dir and --store DIR name directories that
// must exist (exit 5 naming them otherwise); --store DIR lists every
// session below DIR; --store indusagi and agentuse are --indusagi and
// --agentuse; unreadable files are reported one per line on stderr, the
// rest listed, and the exit status is 1.
func TestListStoresAndErrors(t *testing.T) {
	home := t.TempDir()
	isolate(t, home)
	indusagi := filepath.Join(home, "indusagi")
	t.Setenv("INDUSAGI_AGENT_DIR", indusagi)
	for _, k := range []string{"INDUSAGI_CODING_AGENT_DIR", "INDUSAGI_DIR"} {
		t.Setenv(k, "")
	}
	store := filepath.Join(home, "store")
	listSession(t, filepath.Join(store, "top.jsonl"), "aaaa0001", "at the top")
	listSession(t, filepath.Join(store, "p", "q", "deep.jsonl"), "aaaa0002", "two levels down")
	listSession(t, filepath.Join(store, ".trash", "t", "gone.jsonl"), "aaaa0003", "deleted")
	listSession(t, filepath.Join(indusagi, "sessions", "--w--", "i.jsonl"), "bbbb0001", "indusagi session")
	broken := filepath.Join(store, "p", "broken.jsonl")
	noErr(t, os.Symlink("nowhere", broken))
	file := filepath.Join(store, "top.jsonl")
	missing := filepath.Join(home, "missing")

	cases := []struct {
		args     []string
		code     int
		out, err []string // substrings
		notOut   []string
	}{
		{args: []string{"list", "--dir", missing}, code: exitNotFound, err: []string{"session directory " + missing + ": not found"}},
		{args: []string{"list", "--store", missing}, code: exitNotFound, err: []string{"session store " + missing}},
		{args: []string{"list", "--dir", file}, code: exitFailure, err: []string{file + ": not a directory"}},
		{args: []string{"list", "--store", store}, code: exitFailure,
			out:    []string{"at the top", "two levels down"},
			notOut: []string{"deleted"},
			err:    []string{"sessctl: list: skipped open " + broken + ": no such file or directory"}},
		{args: []string{"list", "--dir", filepath.Join(store, "p", "q")}, code: exitOK, out: []string{"two levels down"}},
		{args: []string{"list", "--store", "indusagi", "--all"}, code: exitOK, out: []string{"indusagi session"}},
		{args: []string{"list", "--indusagi", "--all"}, code: exitOK, out: []string{"indusagi session"}},
		{args: []string{"list", "--store", store, "--all"}, code: exitUsage},
		{args: []string{"list", "--store", store, "--indusagi"}, code: exitUsage},
		{args: []string{"list", "--store", "agentuse", "--all"}, code: exitUsage, err: []string{"--agentuse cannot be combined"}},
	}
	for _, c := range cases {
		out, errOut, code := sessctl(t, c.args...)
		name := strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %s", name, code, c.code, errOut)
		}
		for _, s := range c.out {
			if !strings.Contains(out, s) {
				t.Errorf("%s: stdout lacks %q:\n%s", name, s, out)
			}
		}
		for _, s := range c.notOut {
			if strings.Contains(out, s) {
				t.Errorf("%s: stdout has %q:\n%s", name, s, out)
			}
		}
		for _, s := range c.err {
			if !strings.Contains(errOut, s) {
				t.Errorf("%s: stderr lacks %q:\n%s", name, s, errOut)
			}
		}
	}

	// --json still prints every readable session.
	out, _, code := sessctl(t, "list", "--json", "--store", store)
	var infos []struct{ FirstMessage string }
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != 2 || code != exitFailure {
		t.Errorf("--json: exit %d, %v, %+v", code, err, infos)
	}
}

// A listing writes nothing: list --cwd DIR, and list in a directory with
// no sessions, used to create an empty --<cwd>-- directory in the store.
func TestListCreatesNothing(t *testing.T) {
	home := t.TempDir()
	isolate(t, home)
	proj := filepath.Join(home, "proj")
	if err := os.Mkdir(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	for _, args := range [][]string{{"list", "--cwd", proj}, {"list"}, {"list", "--json"}} {
		out, errOut, code := sessctl(t, args...)
		if code != exitOK {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if _, err := os.Lstat(filepath.Join(home, "pi")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v created the store %s (%v)", args, filepath.Join(home, "pi"), err)
		}
	}
}
