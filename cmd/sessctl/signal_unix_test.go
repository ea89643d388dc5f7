//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/testenv"
)

// TestSignalDuringCompact starts a real `sessctl compact` whose summary
// command sleeps, sends it SIGTERM, SIGHUP (a closed terminal) or SIGINT,
// and checks that it cleaned up as it does on Ctrl-C: the summary
// command's whole process group is gone, the owner record removed, the
// session unchanged, and stderr says what happened.
func TestSignalDuringCompact(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGTERM, "stopped by SIGTERM"},
		{syscall.SIGHUP, "stopped by SIGHUP (the terminal closed)"},
		{syscall.SIGINT, "interrupted (SIGINT, Ctrl-C)"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) { signalDuringCompact(t, tc.sig, tc.want) })
	}
}

func signalDuringCompact(t *testing.T, sig syscall.Signal, want string) {
	_, cwd := mutStore(t)
	src, _ := mutSession(t, cwd)
	before := mustRead(t, src)
	pidFile := filepath.Join(t.TempDir(), "pgid")
	cmd := testenv.Command("sessctl", "compact", src, "--keep-tokens", "30",
		"--summary-cmd", `echo $$ > "$SESSCTL_TEST_PIDFILE.tmp" && mv "$SESSCTL_TEST_PIDFILE.tmp" "$SESSCTL_TEST_PIDFILE"; sleep 1000; echo late`)
	cmd.Env = append(cmd.Env, "SESSCTL_TEST_PIDFILE="+pidFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Wait (bounded) for the summary command to run.
	var pgid int
	deadline := time.Now().Add(time.Minute)
	for pgid == 0 {
		if data, err := os.ReadFile(pidFile); err == nil {
			pgid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		select {
		case err := <-exited:
			t.Fatalf("sessctl compact ended before it was signalled: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the summary command did not start within a minute")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	owner := strings.TrimSuffix(sessionfile.LockPath(src), ".lock") + ".owner"
	if _, err := os.Stat(owner); err != nil {
		t.Fatalf("no owner record while compact runs: %v", err)
	}

	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Errorf("sessctl compact after %v: %v, want exit %d\nstderr: %s", sig, err, exitFailure, stderr.String())
	}
	if !strings.Contains(stderr.String(), want+"; it was killed with the processes it started; nothing was written") {
		t.Errorf("stderr does not say what happened:\n%s", stderr.String())
	}
	waitGroupGone(t, pgid)
	if _, err := os.Stat(owner); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the owner record %s is still there after %v (%v)", owner, sig, err)
	}
	if mustRead(t, src) != before {
		t.Errorf("the session changed")
	}
}

// waitGroupGone fails unless every process of group pgid ends (zombies
// waiting for their reaper count as ended) within a minute.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		alive := groupAlive(pgid)
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has running processes %v", pgid, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupAlive returns the running (not zombie) processes of group pgid,
// read from /proc where there is one, else whether kill(-pgid, 0) finds
// any (as [-1]).
func groupAlive(pgid int) []int {
	entries, err := os.ReadDir("/proc/self")
	if err != nil || len(entries) == 0 {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return []int{-1}
	}
	procs, _ := os.ReadDir("/proc")
	var alive []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			alive = append(alive, pid)
		}
	}
	return alive
}
