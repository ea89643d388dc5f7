package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSearchThroughServe: with 'sessctl serve' of the store running, a
// search prints what it prints without one (the golden files), a line
// appended just before the search is found, and a search of another
// store or index is the process's own.
func TestSearchThroughServe(t *testing.T) {
	run := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", run)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	idx := filepath.Join(tmp, "index")
	norm := func(s string) string { return tmpNorm(s, tmp) }
	_, _, stop := startServe(t, "--store", dir, "--index-dir", idx)
	socks, _ := filepath.Glob(filepath.Join(run, "sessctl", "search-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets %v, want serve's", socks)
	}
	fi, err := os.Lstat(socks[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v, %v", fi, err)
	}
	cases := []struct {
		golden string
		args   []string
	}{
		{"search.txt", []string{"search", "--store", dir, "--index-dir", idx, "parser OR scanner"}},
		{"search.jsonl", []string{"search", "--store", dir, "--index-dir", idx, "--json", "parser OR scanner"}},
		{"search-tool.txt", []string{"search", "--store", dir, "--index-dir", idx, "--role", "tool", "--tool", "bash", "scan*"}},
		{"search-other.txt", []string{"search", "--store", dir, "--index-dir", idx, "--role", "other", "--since", "2026-03-01T09:00:10", "crlf OR bufio OR ci OR cause"}},
	}
	served := map[string]string{}
	for _, tc := range cases {
		for range 2 { // the first search walks, the next may only query
			out, errOut, code := runCLI(t, tc.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("sessctl %v: exit %d, stderr:\n%s", tc.args, code, errOut)
			}
			checkGolden(t, tc.golden, norm(out))
			served[tc.golden] = out
		}
	}
	// Exit codes and messages are the process's own: a bad query.
	_, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", idx, `"parser`)
	if code != exitUsage || !strings.Contains(errOut, "hint:") {
		t.Errorf("bad query through serve: exit %d, %s", code, errOut)
	}

	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no fixture files")
	}
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	for i := range rounds {
		w := fmt.Sprintf("okapi%dz", i)
		f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fmt.Fprintf(f, `{"type":"message","id":"ok%d","parentId":null,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":%q,"timestamp":1}}`+"\n", i, w)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", idx, "--json", w)
		if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, w) {
			t.Fatalf("round %d: exit %d, %q, %s", i, code, out, errOut)
		}
	}

	if code, errOut := stop(); code != exitOK {
		t.Fatalf("serve: exit %d, %s", code, errOut)
	}
	if socks, _ := filepath.Glob(filepath.Join(run, "sessctl", "search-*.sock")); len(socks) != 0 {
		t.Errorf("sockets left after serve stopped: %v", socks)
	}
	for _, tc := range cases { // without serve: the same bytes
		out, errOut, code := runCLI(t, tc.args...)
		if code != exitOK || errOut != "" {
			t.Fatalf("sessctl %v: exit %d, stderr:\n%s", tc.args, code, errOut)
		}
		if d := cmp.Diff(served[tc.golden], out); d != "" {
			t.Errorf("%s: (-serve +own):\n%s", tc.golden, d)
		}
	}
}
