//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
)

// TestClosedStdout runs real sessctl processes whose standard output is
// a pipe closed after a few bytes (sessctl ... | head -c 10): each must
// end quietly with status 0, neither killed by SIGPIPE nor saying
// "broken pipe".
func TestClosedStdout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	if _, err := workload.WriteFile(path, workload.Options{Seed: 2, Entries: 300}); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	if _, err := workload.Dir(store, 100, 5000, 2); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"show", "--json", path},
		{"show", "--full", path},
		{"export", "--format", "json", path},
		{"export", "--format", "html", path},
		{"dump", path},
		{"list", "--json", "--dir", store},
		{"stats", "--all", "--json", "--store", store},
		{"tree", path},
	} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			cmd := testenv.Command("sessctl", args...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(out, make([]byte, 10)); err != nil {
				t.Fatalf("reading the first bytes: %v (stderr %q)", err, stderr.String())
			}
			out.Close()
			err = cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) || err != nil {
				t.Errorf("sessctl %s | head -c 10: %v, want status 0", strings.Join(args, " "), err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %q, want nothing", stderr.String())
			}
		})
	}
}
