//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// deepDir makes a chain of directories below dir whose deepest path is
// longer than the system allows (made with mkdirat, one level at a time):
// reading it fails with "file name too long", for root as for anyone, so
// the walk has a directory it cannot read.
func deepDir(t *testing.T, dir string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	for range 4096/len(name) + 2 {
		if err := unix.Mkdirat(fd, name, 0o700); err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
}

// TestSearchSkipsOnce checks that a directory search cannot read is
// reported once, though a directory store is walked for both session
// files and AgentUse sessions.
func TestSearchSkipsOnce(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sessions")
	buildFixtures(t, dir)
	deepDir(t, dir)
	for _, noIndex := range []bool{false, true} {
		args := []string{"search", "--store", dir, "--index-dir", filepath.Join(tmp, "index"), "parser"}
		if noIndex {
			args = []string{"search", "--store", dir, "--no-index", "parser"}
		}
		_, errOut, code := runCLI(t, args...)
		var skipped []string
		for _, l := range strings.Split(errOut, "\n") {
			if strings.HasPrefix(l, "sessctl: search: skipped ") {
				skipped = append(skipped, l)
			}
		}
		if code != exitFailure || len(skipped) != 1 || !strings.Contains(skipped[0], "read directory") {
			// (stderr is not shown: its paths are 4 KB each)
			t.Errorf("no index %v: exit %d, want %d; %d skipped lines, want one that names the directory", noIndex, code, exitFailure, len(skipped))
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
