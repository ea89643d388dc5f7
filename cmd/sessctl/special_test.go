//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the CLI in-process and fails the test if it has not
// returned after a minute: a command that waits on a named pipe fails
// instead of hanging the test binary. The bound only catches a hang.
func runWithin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdout, stderr, code = sessctl(t, args...)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("sessctl %s still blocked after a minute", strings.Join(args, " "))
	}
	return stdout, stderr, code
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestNamedPipeInStore: a named pipe called *.jsonl (no writer ever
// comes) in a store does not hang the commands that look through the
// store, and one named on the command line is refused as "not a regular
// file".
func TestNamedPipeInStore(t *testing.T) {
	home := t.TempDir()
	isolate(t, home)
	store := filepath.Join(home, "store")
	sess := filepath.Join(store, "proj", "2026-01-01T00-00-00-000Z_aaaa1111-0000-4000-8000-000000000001.jsonl")
	if err := os.MkdirAll(filepath.Dir(sess), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sess, []byte(`{"type":"session","version":3,"id":"aaaa1111-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"+
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not pi's file name form: looking ids up reads its header.
	fifo := filepath.Join(store, "proj", "pipe.jsonl")
	mkfifo(t, fifo)

	claude := filepath.Join(home, "claude")
	env := `"sessionId":"s1","cwd":"/w","version":"2.1.0"`
	claudeSess := filepath.Join(claude, "projects", "-w", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(claudeSess), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeSess, []byte(`{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"first"},`+env+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(claude, "projects", "-w", "s2.jsonl"))
	mkfifo(t, filepath.Join(claude, "projects", "-w", "agent-x.jsonl"))
	mkfifo(t, filepath.Join(claude, "history.jsonl"))

	notRegular := "pipe.jsonl: not a regular file"
	cases := []struct {
		args     []string
		code     int
		out, err string // substrings
	}{
		{args: []string{"show", "--store", store, "aaaa1111"}, code: exitOK, out: "hi"},
		{args: []string{"show", fifo}, code: exitFailure, err: notRegular},
		{args: []string{"verify", filepath.Join(store, "proj")}, code: exitFailure, out: "ok", err: notRegular},
		{args: []string{"stats", "--all", "--store", store}, code: exitFailure, err: "skipping " + fifo},
		{args: []string{"migrate", fifo}, code: exitFailure, err: notRegular},
		{args: []string{"migrate", "--dry-run", store}, code: exitFailure, out: "v3, nothing to do", err: notRegular},
		{args: []string{"repair", fifo}, code: exitFailure, err: notRegular},
		{args: []string{"import", "claude", "--dry-run", claude}, code: exitCorrupt, out: "s1", err: "s2.jsonl: not a regular file"},
	}
	for _, c := range cases {
		out, errOut, code := runWithin(t, c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.err) {
			t.Errorf("sessctl %s: exit %d, want %d; stdout %q (want %q); stderr %q (want %q)",
				strings.Join(c.args, " "), code, c.code, out, c.out, errOut, c.err)
		}
	}
}
