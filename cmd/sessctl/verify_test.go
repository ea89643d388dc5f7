package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/repair"
)

const vHeader = `{"type":"session","version":3,"id":"5e55-v","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`

// vEntry is a user message entry; parent "" writes null.
func vEntry(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"text of %s","timestamp":1}}`, id, p, id)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// verifyKinds runs verify --json on path and returns the sorted distinct
// problem kinds and the exit code.
func verifyKinds(t *testing.T, path string) ([]string, int) {
	t.Helper()
	out, errOut, code := runCLI(t, "verify", "--json", path)
	if code != exitOK && code != exitCorrupt {
		t.Fatalf("verify %s: exit %d: %s", path, code, errOut)
	}
	var rep repair.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json output %q: %v", out, err)
	}
	set := map[string]bool{}
	for _, p := range rep.Problems {
		set[p.Kind] = true
		if p.Message == "" {
			t.Errorf("finding %+v has no message", p)
		}
	}
	kinds := []string{}
	for k := range set {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if rep.OK != (len(kinds) == 0) {
		t.Errorf("ok = %v with problems %v", rep.OK, kinds)
	}
	return kinds, code
}

// repairAndCheck repairs path into a new file, checks that the original
// is untouched and that the result passes verify, and returns the
// result's path and what repair reported.
func repairAndCheck(t *testing.T, path string) (string, repair.Result) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "repaired.jsonl")
	stdout, errOut, code := runCLI(t, "repair", "--json", "-o", out, path)
	if code != exitOK {
		t.Fatalf("repair %s: exit %d: %s", path, code, errOut)
	}
	var res repair.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("repair --json output %q: %v", stdout, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("repair modified the original %s", path)
	}
	if res.Output == nil || *res.Output != out {
		t.Fatalf("repair output = %v, want %s", res.Output, out)
	}
	if kinds, code := verifyKinds(t, out); code != exitOK {
		data, _ := os.ReadFile(out)
		t.Fatalf("repaired file fails verify with %v:\n%s", kinds, data)
	}
	return out, res
}

// branchIDs opens path read-only and returns the ids on the leaf's
// branch, root first.
func branchIDs(t *testing.T, path string) []string {
	t.Helper()
	s, err := engine.Open(context.Background(), path, engine.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for _, e := range s.BranchPath("") {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestRepairBeside checks the default output name and that repair never
// overwrites.
func TestRepairBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(vHeader, vEntry("a", ""), "junk")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "repair", path)
	if code != exitOK {
		t.Fatalf("repair: exit %d: %s", code, errOut)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "s.repaired-*.jsonl"))
	if len(matches) != 1 || !strings.Contains(out, matches[0]) {
		t.Fatalf("repaired files %v, output %q", matches, out)
	}
	if fi, err := os.Stat(matches[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("repaired file mode: %v, %v", fi, err)
	}
	// -o naming an existing file, or the original itself, is refused.
	for _, target := range []string{matches[0], path} {
		if _, _, code := runCLI(t, "repair", "-o", target, path); code == exitOK {
			t.Errorf("repair -o %s succeeded; it must not overwrite", target)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != lines(vHeader, vEntry("a", ""), "junk") {
		t.Errorf("the original changed")
	}
}

// TestVerifyRepairExitCodes checks the CLI's wiring of package repair:
// exit 0 and 4, repair of a valid file, of a newer version (exit 4 with
// a hint), and one JSON object per file for a directory.
func TestVerifyRepairExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	newer := filepath.Join(dir, "sub", "newer.jsonl")
	if err := os.WriteFile(good, []byte(lines(vHeader, vEntry("a", ""))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(lines(vHeader, vEntry("a", ""), "junk")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(newer), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newer, []byte(lines(`{"type":"session","version":4,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`, vEntry("a", ""))), 0o600); err != nil {
		t.Fatal(err)
	}
	if kinds, code := verifyKinds(t, good); code != exitOK || len(kinds) != 0 {
		t.Errorf("verify good: exit %d, %v", code, kinds)
	}
	if kinds, code := verifyKinds(t, bad); code != exitCorrupt || !cmp.Equal(kinds, []string{"malformed"}) {
		t.Errorf("verify bad: exit %d, %v", code, kinds)
	}
	if out, _, code := runCLI(t, "repair", good); code != exitOK || !strings.Contains(out, "nothing to repair") {
		t.Errorf("repair of a valid file: exit %d, %q", code, out)
	}
	if _, errOut, code := runCLI(t, "repair", "-o", filepath.Join(t.TempDir(), "x.jsonl"), newer); code != exitCorrupt || !strings.Contains(errOut, "hint:") {
		t.Errorf("repair of a newer version: exit %d, stderr %q; want 4 with a hint", code, errOut)
	}
	out, _, code := runCLI(t, "verify", "--json", dir)
	if code != exitCorrupt || strings.Count(out, "\n") != 3 {
		t.Errorf("verify of a directory: exit %d, %q; want 4 and 3 lines", code, out)
	}
	repairAndCheck(t, bad)
}
