package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestReadCommandErrors checks exit codes, and that every error goes to
// stderr with a hint and nothing to stdout.
func TestReadCommandErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	noHeader := filepath.Join(dir, "noheader.jsonl")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(good, []byte(lines(vHeader, vEntry("a1", ""), vEntry("a2", "a1"), vEntry("b1", "a1"))), 0o600))
	must(os.WriteFile(noHeader, []byte(lines(vEntry("a", ""))), 0o600))
	missing := filepath.Join(dir, "missing.jsonl")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"show missing file", []string{"show", missing}, exitNotFound},
		{"show corrupt", []string{"show", noHeader}, exitCorrupt},
		{"show unknown leaf", []string{"show", "--leaf", "zz", good}, exitNotFound},
		{"show ambiguous leaf", []string{"show", "--leaf", "a", good}, exitUsage},
		{"show no session", []string{"show"}, exitUsage},
		{"show bad flag", []string{"show", "--nope", good}, exitUsage},
		{"tree corrupt", []string{"tree", noHeader}, exitCorrupt},
		{"tree two sessions", []string{"tree", good, good}, exitUsage},
		{"stats missing", []string{"stats", missing}, exitNotFound},
		{"stats all with session", []string{"stats", "--all", good}, exitUsage},
		{"export bad format", []string{"export", "--format", "pdf", good}, exitUsage},
		{"export unknown leaf", []string{"export", "--leaf", "zz", good}, exitNotFound},
		{"export corrupt", []string{"export", noHeader}, exitCorrupt},
		{"verify nothing", []string{"verify"}, exitUsage},
		{"verify missing", []string{"verify", missing}, exitNotFound},
		{"repair missing", []string{"repair", missing}, exitNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout is not empty on error:\n%s", out)
			}
			if !strings.HasPrefix(errOut, "sessctl: ") || !strings.Contains(errOut, "\nhint: ") {
				t.Errorf("stderr lacks the error and hint lines:\n%s", errOut)
			}
		})
	}
	// verify reports what it can and exits 4 when a file is damaged, even
	// when another name is missing.
	out, _, code := runCLI(t, "verify", good, missing, noHeader)
	if code != exitCorrupt || !strings.Contains(out, "good.jsonl: ok") || !strings.Contains(out, "noheader.jsonl: 1 problem") {
		t.Errorf("verify of mixed names: exit %d, output:\n%s", code, out)
	}
	// A leaf prefix picks the branch.
	out, _, code = runCLI(t, "show", "--json", "--leaf", "b", good)
	if code != exitOK || out != lines(vHeader, vEntry("a1", ""), vEntry("b1", "a1")) {
		t.Errorf("show --json --leaf b: exit %d, output:\n%s", code, out)
	}
}

// TestReadCommandHelp checks that each command's help goes to stdout,
// exits 0, and has examples and the flags.
func TestReadCommandHelp(t *testing.T) {
	for _, name := range []string{"show", "tree", "stats", "export", "verify", "repair"} {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{"help", name}, {name, "-h"}} {
				out, errOut, code := runCLI(t, args...)
				if code != exitOK || errOut != "" {
					t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
				}
				wants := []string{"Usage: sessctl " + name, "Examples:", "Flags:", "-json"}
				if name == "export" {
					wants[3] = "-format"
				}
				if name == "stats" {
					wants = append(wants, "[--no-index]", "-no-index", "stats-index")
				}
				for _, want := range wants {
					if !strings.Contains(out, want) {
						t.Errorf("%v: help lacks %q", args, want)
					}
				}
			}
		})
	}
}

// TestTreeCollapsesChains checks that a long linear session stays at the
// left margin and that branches indent, on a chain too deep for
// recursion to be safe.
func TestTreeCollapsesChains(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString(vHeader + "\n")
	parent := ""
	for i := range n {
		id := fmt.Sprintf("c%06d", i)
		b.WriteString(vEntry(id, parent) + "\n")
		parent = id
	}
	// A branch off the tenth entry, then back on the main line.
	b.WriteString(vEntry("side1", "c000009") + "\n")
	b.WriteString(vEntry("side2", "side1") + "\n")
	b.WriteString(vEntry("tip", parent) + "\n")
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "tree", path)
	if code != exitOK {
		t.Fatalf("tree: exit %d: %s", code, errOut)
	}
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(ls) != n+4 {
		t.Fatalf("tree printed %d lines, want %d", len(ls), n+4)
	}
	want := []string{
		"  c000008  user: text of c000008",
		"  c000009  user: text of c000009",
		"  ├─ c000010  user: text of c000010",
		"  │  c000011  user: text of c000011",
	}
	if diff := cmp.Diff(want, ls[9:13]); diff != "" {
		t.Errorf("around the branch point (-want +got):\n%s", diff)
	}
	tail := []string{
		"  │  c004999  user: text of c004999",
		"* │  tip  user: text of tip",
		"  └─ side1  user: text of side1",
		"     side2  user: text of side2",
	}
	if diff := cmp.Diff(tail, ls[len(ls)-4:]); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
	// The JSON nests as deep as the chain is long, deeper than
	// encoding/json decodes; count the nodes instead.
	out, _, code = runCLI(t, "tree", "--json", path)
	if got := strings.Count(out, `"children":[`); code != exitOK || got != n+3 {
		t.Errorf("tree --json: exit %d, %d nodes, want %d", code, got, n+3)
	}
}

// TestTreeDamaged checks the tree of a file with a repeated id and a
// cycle: the repeat prints once (both places carry the leaf's id), the
// cycle is reported on stderr.
func TestTreeDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	data := lines(vHeader, vEntry("a", ""), vEntry("b", "a"), vEntry("x", "y"), vEntry("y", "x"), vEntry("b", "a"))
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "tree", path)
	if code != exitOK {
		t.Fatalf("tree: exit %d: %s", code, errOut)
	}
	want := "session 5e55-v (5 entries)\n" +
		"  a  user: text of a\n" +
		"* ├─ b  user: text of b\n" +
		"* └─ b  (repeated id, shown above)\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if !strings.Contains(errOut, "2 entries are on parent cycles") || !strings.Contains(errOut, "hint: run 'sessctl verify") {
		t.Errorf("stderr: %q", errOut)
	}
}

// TestExportFile checks -o and that the HTML page loads nothing and runs
// nothing.
func TestExportFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	evil := `{"type":"message","id":"x","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"<script>alert(1)</script><img src=https://example.com/x.png>"},{"type":"image","mimeType":"image/svg+xml","data":"PHN2Zz4="},{"type":"image","mimeType":"image/png","data":"\"><script>"}],"timestamp":1}}`
	if err := os.WriteFile(path, []byte(lines(vHeader, evil)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.html")
	if stdout, errOut, code := runCLI(t, "export", "--format", "html", "-o", out, path); code != exitOK || stdout != "" {
		t.Fatalf("export -o: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "default-src 'none'") {
		t.Errorf("the page does not escape the text or lacks its CSP:\n%s", page)
	}
	if fi, err := os.Stat(out); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) { // no modes on Windows
		t.Errorf("export file mode: %v %v", fi, err)
	}
}

// TestShowAgentUse checks that show hands AgentUse sessions to the
// AgentUse transcript.
func TestShowAgentUse(t *testing.T) {
	cases := testenv.Corpus(t, "pi", "cases")
	root := filepath.Join(cases, "..", "..", "agentuse", "api-driven", "xdg-data", "agentuse", "project")
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "session", "*", "session.json"))
	if len(dirs) == 0 {
		t.Fatalf("no AgentUse sessions under %s", root)
	}
	dir := filepath.Dir(dirs[0])
	out, errOut, code := runCLI(t, "show", dir)
	if code != exitOK || !strings.HasPrefix(out, "session ") {
		t.Errorf("show %s: exit %d, stdout %q, stderr %q", dir, code, out, errOut)
	}
	if _, _, code := runCLI(t, "show", "--leaf", "x", dir); code != exitUsage {
		t.Errorf("show --leaf of an AgentUse session: exit %d, want 2", code)
	}
}
