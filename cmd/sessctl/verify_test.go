package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/testenv"
)

// Small session files by hand (shared with the libraries' tests).
const vHeader = testenv.PiHeader

var (
	vEntry = testenv.PiMessage
	lines  = testenv.Lines
)

// verifyJSON runs verify --json on path and returns its report and exit
// code.
func verifyJSON(t *testing.T, path string) (repair.Report, int) {
	t.Helper()
	out, errOut, code := runCLI(t, "verify", "--json", path)
	var rep repair.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json %s: exit %d, %v: %q %s", path, code, err, out, errOut)
	}
	return rep, code
}

// TestVerifyRepairCLI checks the CLI's wiring of package repair (whose
// tests check what it finds and fixes): verify's exit codes, text and
// JSON, one JSON object per file of a directory; repair's default output
// name and its text, -o, --json, nothing written for a valid file, never
// overwriting, and exit 4 with a hint for a newer version.
func TestVerifyRepairCLI(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	newer := filepath.Join(dir, "sub", "newer.jsonl")
	write := func(path, data string) { testenv.WriteFile(t, path, data) }
	write(good, lines(vHeader, vEntry("a", "")))
	write(bad, lines(vHeader, vEntry("a", ""), "junk"))
	write(newer, lines(`{"type":"session","version":4,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`, vEntry("a", "")))

	if rep, code := verifyJSON(t, good); code != exitOK || !rep.OK || len(rep.Problems) != 0 {
		t.Errorf("verify good: exit %d, %+v", code, rep)
	}
	if rep, code := verifyJSON(t, bad); code != exitCorrupt || rep.OK || len(rep.Problems) != 1 || rep.Problems[0].Kind != "malformed" {
		t.Errorf("verify bad: exit %d, %+v", code, rep)
	}
	if out, _, code := runCLI(t, "verify", bad); code != exitCorrupt || !strings.Contains(out, "1 problem") || !strings.Contains(out, "  malformed: line 3") {
		t.Errorf("verify text: exit %d, %q", code, out)
	}
	if out, _, code := runCLI(t, "verify", "--json", dir); code != exitCorrupt || strings.Count(out, "\n") != 3 {
		t.Errorf("verify of a directory: exit %d, %q; want 4 and 3 lines", code, out)
	}

	if out, _, code := runCLI(t, "repair", good); code != exitOK || !strings.Contains(out, "nothing to repair") {
		t.Errorf("repair of a valid file: exit %d, %q", code, out)
	}
	if _, errOut, code := runCLI(t, "repair", "-o", filepath.Join(t.TempDir(), "x.jsonl"), newer); code != exitCorrupt || !strings.Contains(errOut, "hint:") {
		t.Errorf("repair of a newer version: exit %d, stderr %q; want 4 with a hint", code, errOut)
	}
	out, errOut, code := runCLI(t, "repair", bad)
	matches, _ := filepath.Glob(filepath.Join(dir, "bad.repaired-*.jsonl"))
	if code != exitOK || len(matches) != 1 || !strings.HasPrefix(out, bad+" -> "+matches[0]+"\n") || !strings.Contains(out, "sessctl verify ") {
		t.Fatalf("repair: exit %d, files %v, output %q %s", code, matches, out, errOut)
	}
	target := filepath.Join(t.TempDir(), "fixed.jsonl")
	stdout, _, code := runCLI(t, "repair", "--json", "-o", target, bad)
	var res repair.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitOK || res.Output == nil || *res.Output != target || !res.Changed {
		t.Errorf("repair --json -o: exit %d, %v, %+v", code, err, res)
	}
	for _, target := range []string{matches[0], bad} {
		if _, _, code := runCLI(t, "repair", "-o", target, bad); code == exitOK {
			t.Errorf("repair -o %s succeeded; it must not overwrite", target)
		}
	}
	if b, _ := os.ReadFile(bad); string(b) != lines(vHeader, vEntry("a", ""), "junk") {
		t.Errorf("the original changed")
	}
}
