package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewerVersion checks that the read commands read a file of a newer
// format version with a one-line warning, and that fork refuses it as
// the other writing commands do, writing nothing.
func TestNewerVersion(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "v4.jsonl")
	data := `{"type":"session","version":4,"id":"s4","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(src, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	warning := func(cmd string) string {
		return "sessctl: " + cmd + ": warning: " + src + " is format version 4; this sessctl knows up to 3, entries may be misread\n"
	}
	for _, args := range [][]string{
		{"show", src}, {"show", "--json", src}, {"stats", src}, {"dump", src}, {"tree", src},
		{"context", src}, {"export", src}, {"export", "--format", "json", src},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != exitOK || errOut != warning(args[0]) || out == "" {
			t.Errorf("sessctl %s: exit %d, stderr %q; want exit 0 and %q", strings.Join(args, " "), code, errOut, warning(args[0]))
		}
	}
	out, errOut, code := runCLI(t, "stats", "--all", "--store", dir)
	if code != exitOK || errOut != warning("stats") || !strings.Contains(out, "Sessions  1") {
		t.Errorf("stats --all: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	for _, args := range [][]string{{"fork", src}, {"fork", src, "--all"}} {
		_, errOut, code := runCLI(t, args...)
		if code != exitCorrupt || !strings.Contains(errOut, "session version 4 is newer than the supported version 3") {
			t.Errorf("sessctl %s: exit %d, stderr %q; want exit %d and the version error", strings.Join(args, " "), code, errOut, exitCorrupt)
		}
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Errorf("the directory holds %d files after the refused forks, want only the source", len(names))
	}
	if got, _ := os.ReadFile(src); string(got) != data {
		t.Errorf("the source changed")
	}
}
