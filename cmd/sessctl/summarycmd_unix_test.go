//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSummaryCommandBackgroundChild checks that a summary command that
// leaves a child running, holding its output, gives its summary (what it
// printed before it exited) and that the child is killed with its
// process group.
func TestSummaryCommandBackgroundChild(t *testing.T) {
	_, cwd := mutStore(t)
	src, _ := mutSession(t, cwd)
	pidFile := filepath.Join(t.TempDir(), "pgid")
	t.Setenv("SESSCTL_TEST_PIDFILE", pidFile)
	out, errOut, code := mutRun(t, "", "compact", src, "--keep-tokens", "30", "--summary-cmd",
		`sleep 1000 & echo $$ > "$SESSCTL_TEST_PIDFILE.tmp" && mv "$SESSCTL_TEST_PIDFILE.tmp" "$SESSCTL_TEST_PIDFILE"; echo 'the summary'`)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(mustRead(t, src), `"summary":"the summary`) {
		t.Errorf("no compaction with the command's summary in the session")
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pgid)
}

// TestSummaryNotText checks that a summary with a NUL byte or invalid
// UTF-8, from a summary command or a file, is refused and nothing is
// written.
func TestSummaryNotText(t *testing.T) {
	_, cwd := mutStore(t)
	file := filepath.Join(t.TempDir(), "summary")
	if err := os.WriteFile(file, []byte("a summary\x00with a NUL"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--summary-cmd", `printf 'caf\351'`}, "its output is not text: invalid UTF-8 at byte 3"},
		{[]string{"--summary-cmd", `printf 'a\000b'`}, "its output is not text: a NUL byte at byte 1"},
		{[]string{"--summary-file", file}, "is not text: a NUL byte at byte 9"},
	} {
		src, _ := mutSession(t, cwd)
		before := mustRead(t, src)
		_, errOut, code := mutRun(t, "", append([]string{"compact", src, "--keep-tokens", "30"}, tc.args...)...)
		if code != exitFailure || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d; stderr %q lacks %q", tc.args, code, exitFailure, errOut, tc.want)
		}
		if mustRead(t, src) != before {
			t.Errorf("%v: the session changed", tc.args)
		}
	}
}
