package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
)

// Environment variables that configure a helper process.
const (
	envPath    = "SESSCTL_LOCK_PATH"
	envNoFlock = "SESSCTL_LOCK_NOFLOCK"
	envMarker  = "SESSCTL_LOCK_MARKER"
	envCycles  = "SESSCTL_LOCK_CYCLES"
)

// helpers are the helper processes the real-process tests start by
// re-running the test binary (see main_test.go), by role:
//
//	hold   acquire the lock, print "ready", hold it until stdin is closed
//	sleep  print "ready", then wait until stdin is closed (a live pid)
//	exit   exit at once (a pid that is gone once reaped)
//	loop   acquire and release the lock for SESSCTL_LOCK_CYCLES cycles,
//	       proving exclusive ownership with an O_EXCL marker file
var helpers = map[string]func() int{
	"hold":  func() int { return runHelper("hold") },
	"sleep": func() int { return runHelper("sleep") },
	"exit":  func() int { return runHelper("exit") },
	"loop":  func() int { return runHelper("loop") },
}

func runHelper(role string) int {
	path := os.Getenv(envPath)
	opts := Options{Command: "helper", NoFlock: os.Getenv(envNoFlock) == "1"}
	ctx := context.Background()
	switch role {
	case "exit":
		return 0
	case "sleep":
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "hold":
		l, err := Acquire(ctx, path, opts)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		if err := l.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			return 1
		}
		return 0
	case "loop":
		n, err := strconv.Atoi(os.Getenv(envCycles))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cycles:", err)
			return 2
		}
		contended, err := loopCycles(ctx, path, os.Getenv(envMarker), n, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("contended", contended)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper role", role)
	return 2
}

// loopCycles acquires and releases the lock n times. While holding it, it
// creates marker with O_EXCL and removes it before releasing: if two
// holders ever overlapped, one of them would find the marker present.
func loopCycles(ctx context.Context, path, marker string, n int, opts Options) (contended int, err error) {
	// The cycles are bounded by time too, so that a loaded machine runs
	// fewer of them rather than failing: what is checked is that two
	// holders never overlap, not how fast the lock is. Fewer than minCycles
	// in the time would mean the lock is stuck.
	const minCycles = 20
	deadline := time.Now().Add(60 * time.Second)
	for done := 0; done < n; {
		if time.Now().After(deadline) {
			if done >= min(n, minCycles) {
				return contended, nil
			}
			return contended, fmt.Errorf("only %d of %d cycles in 60s", done, n)
		}
		l, err := Acquire(ctx, path, opts)
		if errors.Is(err, ErrLocked) {
			contended++
			time.Sleep(20 * time.Microsecond)
			continue
		}
		if err != nil {
			return contended, fmt.Errorf("cycle %d: %w", done, err)
		}
		f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			l.Close()
			return contended, fmt.Errorf("cycle %d: two holders at once: %w", done, err)
		}
		f.Close()
		if err := os.Remove(marker); err != nil {
			l.Close()
			return contended, fmt.Errorf("cycle %d: %w", done, err)
		}
		if err := l.Close(); err != nil {
			return contended, fmt.Errorf("cycle %d: %w", done, err)
		}
		done++
	}
	return contended, nil
}

// helper is a running helper process.
type helper struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	done   bool
}

// helperCmd returns the command that runs this test binary as a helper.
func helperCmd(t *testing.T, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := testenv.Command(role)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// startHelper starts a helper and, for the roles that announce it, waits
// for its "ready" line. The helper is stopped when the test ends.
func startHelper(t *testing.T, role string, env ...string) *helper {
	t.Helper()
	cmd := helperCmd(t, role, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(out)}
	t.Cleanup(func() {
		if !h.done {
			h.cmd.Process.Kill()
			h.cmd.Wait()
		}
	})
	if role == "hold" || role == "sleep" {
		line, err := h.stdout.ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			h.kill(t)
			t.Fatalf("helper %s: got %q, %v; want ready", role, line, err)
		}
	}
	return h
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// stop closes the helper's stdin so it releases what it holds, and waits
// for it to exit.
func (h *helper) stop(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper pid %d: %v", h.pid(), err)
	}
	h.done = true
}

// kill sends SIGKILL and reaps the helper, so its pid is gone afterwards.
func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.cmd.Wait()
	h.done = true
}

// deadPID returns the pid of a helper that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := helperCmd(t, "exit")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func pathEnv(path string) string { return envPath + "=" + path }

func noFlockEnv(noFlock bool) string {
	if noFlock {
		return envNoFlock + "=1"
	}
	return envNoFlock + "=0"
}
