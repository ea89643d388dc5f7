package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
)

// TestSearchGolden checks search's human and JSON output on the fixture
// sessions (-update rewrites the goldens).
func TestSearchGolden(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	idx := filepath.Join(tmp, "index")
	norm := func(s string) string { return tmpNorm(s, tmp) }
	cases := []struct {
		golden string
		args   []string
	}{
		{"search.txt", []string{"search", "--store", dir, "--index-dir", idx, "parser OR scanner"}},
		{"search.jsonl", []string{"search", "--store", dir, "--index-dir", idx, "--json", "parser OR scanner"}},
		{"search-tool.txt", []string{"search", "--store", dir, "--index-dir", idx, "--role", "tool", "--tool", "bash", "scan*"}},
		{"search-other.txt", []string{"search", "--store", dir, "--index-dir", idx, "--role", "other", "--since", "2026-03-01T09:00:10", "crlf OR bufio OR ci OR cause"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("sessctl %v: exit %d, stderr:\n%s", tc.args, code, errOut)
			}
			checkGolden(t, tc.golden, norm(out))
			// Without the index: the same hits.
			noIdx := append([]string{"search", "--no-index"}, tc.args[1:]...)
			out2, errOut, code := runCLI(t, noIdx...)
			if code != exitOK || errOut != "" {
				t.Fatalf("sessctl %v: exit %d, stderr:\n%s", noIdx, code, errOut)
			}
			if diff := cmp.Diff(out, out2); diff != "" {
				t.Errorf("--no-index differs (-index +no-index):\n%s", diff)
			}
		})
	}
}

// TestSearchShowsHit checks that the command a hit prints shows the
// branch that ends at the hit's entry.
func TestSearchShowsHit(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	out, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", filepath.Join(tmp, "index"), "--json", "bufio")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 {
		t.Fatal("no hits")
	}
	for _, l := range lines {
		var h struct {
			Entry string
			Show  []string
		}
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		if h.Show[0] != "sessctl" {
			t.Fatalf("show = %v", h.Show)
		}
		shown, errOut, code := runCLI(t, h.Show[1:]...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", h.Show, code, errOut)
		}
		// The branch ends at the entry: it is the last one shown.
		msgs := regexpEntryLines(shown)
		if len(msgs) == 0 || msgs[len(msgs)-1] != h.Entry {
			t.Errorf("%v shows a branch ending at %v, want %s", h.Show, msgs, h.Entry)
		}
	}
}

var entryRef = regexp.MustCompile(`\[(e[0-9a-f]{7})\]`)

// regexpEntryLines returns the entry ids show prints ("[e0000001]"), in
// order.
func regexpEntryLines(s string) []string {
	var ids []string
	for _, m := range entryRef.FindAllStringSubmatch(s, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestSearchExitCodes(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	idx := filepath.Join(tmp, "index")
	cases := []struct {
		name    string
		args    []string
		code    int
		stderr  string
		noStdin bool
	}{
		{"no hits", []string{"--store", dir, "--index-dir", idx, "zyzzyva"}, exitFailure, "no hits\n", false},
		{"no hits json", []string{"--store", dir, "--index-dir", idx, "--json", "zyzzyva"}, exitFailure, "", false},
		{"bad query", []string{"--store", dir, "--index-dir", idx, `"open`}, exitUsage, "sessctl: search: bad search query", false},
		{"punctuation", []string{"--store", dir, "--index-dir", idx, "bytes.Split"}, exitUsage, "hint: words", false},
		{"missing store", []string{"--store", filepath.Join(tmp, "nope"), "--index-dir", idx, "x"}, exitNotFound, "not found", false},
		{"no query", []string{"--store", dir}, exitUsage, "expected a QUERY", false},
		{"two queries", []string{"--store", dir, "a", "b"}, exitUsage, "quote the query", false},
		{"bad role", []string{"--role", "robot", "x"}, exitUsage, "--role must be", false},
		{"bad since", []string{"--since", "yesterday", "x"}, exitUsage, "is not a date", false},
		{"all and store", []string{"--all", "--store", dir, "x"}, exitUsage, "cannot be combined", false},
		{"bad limit", []string{"--limit", "-1", "x"}, exitUsage, "--limit", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, append([]string{"search"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) || tc.stderr == "" && errOut != "" {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr with %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
}

// TestSearchIndexFailure checks that a search whose index cannot be used
// exits 6 with a hint, not 1 (grep's "nothing found").
func TestSearchIndexFailure(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	idx := filepath.Join(tmp, "index")
	// FTS5's files: the own engine rebuilds whatever it cannot read.
	if _, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", idx, "--engine", "fts5", "parser"); code != exitOK {
		t.Fatalf("first search: exit %d: %s", code, errOut)
	}
	// A database file that is a directory with a file in it: SQLite
	// cannot open it, and the search cannot delete it to start again.
	db := filepath.Join(idx, "index-1.db")
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(db, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", idx, "--engine", "fts5", "parser")
	if code != exitIndex || out != "" || !strings.Contains(errOut, "search index "+db) || !strings.Contains(errOut, "hint: the search index failed") {
		t.Errorf("exit %d, want %d; stdout %q, stderr:\n%s", code, exitIndex, out, errOut)
	}
	// Without the index the search works.
	if _, errOut, code := runCLI(t, "search", "--store", dir, "--no-index", "parser"); code != exitOK {
		t.Errorf("--no-index: exit %d: %s", code, errOut)
	}
}

// TestSearchIndexDirInStore checks that --index-dir inside a store
// (searched or not) is refused before anything is written there.
func TestSearchIndexDirInStore(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	pi := filepath.Join(tmp, "pi-agent")
	if err := os.MkdirAll(filepath.Join(pi, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_CODING_AGENT_DIR", pi)
	link := filepath.Join(tmp, "link")
	linked := testenv.Symlink(dir, link) // (not on Windows without the right, nor under wine)
	list := func(root string) []string {
		var names []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			names = append(names, p)
			return nil
		})
		return names
	}
	cases := []struct {
		name, index, where string
	}{
		{"the store", dir, "the searched store"},
		{"below the store", filepath.Join(dir, "idx"), "the searched store"},
		{"through a link", filepath.Join(link, "idx"), "the searched store"},
		{"pi's store", filepath.Join(pi, "cache"), "pi's store"},
		{"pi's sessions", filepath.Join(pi, "sessions", "idx"), "pi's store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.index, link) && !linked {
				t.Skip("no symbolic link")
			}
			before, beforePi := list(dir), list(pi)
			_, errOut, code := runCLI(t, "search", "--store", dir, "--index-dir", tc.index, "parser")
			if code != exitUsage || !strings.Contains(errOut, "is inside "+tc.where) || !strings.Contains(errOut, "hint: give --index-dir") {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if !cmp.Equal(before, list(dir)) || !cmp.Equal(beforePi, list(pi)) {
				t.Errorf("written into a store: %v, %v", list(dir), list(pi))
			}
		})
	}
}

// TestShowArgs: the command line a hit prints to show it, the branch at
// its entry for a JSONL session, the session for an AgentUse one; and
// --json carries it as "show", after the hit's members.
func TestShowArgs(t *testing.T) {
	h := &search.Hit{Session: search.Session{Path: "/s1.jsonl", Format: layout.FormatJSONL}, Entry: "a1"}
	if diff := cmp.Diff([]string{"sessctl", "show", "--leaf", "a1", "/s1.jsonl"}, showArgs(h)); diff != "" {
		t.Errorf("show args (-want +got):\n%s", diff)
	}
	au := &search.Hit{Session: search.Session{Path: "/au/01M7ZXJ0KC9S183XADC88B6A01-ag", Format: layout.FormatAgentUse}, Entry: "msg_1"}
	if diff := cmp.Diff([]string{"sessctl", "show", au.Session.Path}, showArgs(au)); diff != "" {
		t.Errorf("show (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writeHitJSON(w, h)
	w.Flush()
	if !strings.HasSuffix(b.String(), `"matches":[],"show":["sessctl","show","--leaf","a1","/s1.jsonl"]}`+"\n") {
		t.Errorf("--json: %s", b.String())
	}
}
