//go:build unix

package compaction

import (
	"errors"
	"os"
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
