//go:build unix

package compaction

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitGone fails the test unless the process pid ends (or is a zombie
// left for its new parent to reap) within a generous bound: a killed
// program must not live on.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		t.Fatalf("bad pid %q", pid)
	}
	deadline := time.Now().Add(time.Minute)
	for !processGone(n) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(n, syscall.SIGKILL)
			t.Fatalf("process %d is still running after its command was killed", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs: it does not exist, or
// it is a zombie.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // no /proc: trust kill, which says it exists
	}
	// The state follows the command name in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// TestCommandOutputHeldOutsideGroup checks that a program whose output
// stays open in a process it started outside its process group (which
// cannot be killed with the group) makes Summarize fail, saying so, once
// a grace period has passed, instead of waiting as long as that process
// runs.
func TestCommandOutputHeldOutsideGroup(t *testing.T) {
	t.Parallel()
	needSh(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	// (The command waits until the process has left its group.)
	script := `setsid sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 1000' sh "$0" &
		while [ ! -e "$0" ]; do sleep 0.01; done; echo done`
	c := &Command{Path: "sh", Args: []string{"-c", script, pidFile}}
	got, err := c.Summarize(t.Context(), Request{Prompt: "x"})
	if data, rerr := os.ReadFile(pidFile); rerr == nil {
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil && pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "a process it started outside its process group still held its output") {
		t.Errorf("Summarize = %q, %v; want an error saying its output was held", got, err)
	}
}
