//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestResolveSaysWhatIsWrong: a session named by a path is "not found"
// (exit 5) only when it does not exist; a directory, a symbolic link
// loop, a path through a file and a directory the user may not search
// each get their own error and exit 1.
func TestResolveSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	listSession(t, good, "cccc0001", "hello")
	loop := filepath.Join(dir, "loop.jsonl")
	noErr(t, os.Symlink("loop.jsonl", loop))
	sub := filepath.Join(dir, "x.jsonl")
	noErr(t, os.Mkdir(sub, 0o700))
	cases := []struct {
		arg  string
		code int
		err  string
	}{
		{good, exitOK, ""},
		{filepath.Join(dir, "missing.jsonl"), exitNotFound, "missing.jsonl: not found"},
		{loop, exitFailure, "loop.jsonl: too many levels of symbolic links"},
		{sub, exitFailure, "x.jsonl: is a directory"},
		{filepath.Join(good, "in.jsonl"), exitFailure, "in.jsonl: not a directory"},
	}
	for _, c := range cases {
		_, errOut, code := sessctl(t, "show", c.arg)
		if code != c.code || !strings.Contains(errOut, c.err) {
			t.Errorf("show %s: exit %d, want %d; stderr %q, want %q", c.arg, code, c.code, errOut, c.err)
		}
	}
}

// TestResolveUnreadable runs the CLI as an ordinary user (nobody): a path
// in a directory it may not search is "permission denied", not "not
// found"; an id not found while part of the store could not be read says
// so, and is not "not found" either. Needs root to switch users.
func TestResolveUnreadable(t *testing.T) {
	base := asUserDir(t)
	runAsNobody := asNobody(t, base)
	store := filepath.Join(base, "store")
	open := filepath.Join(store, "open")
	private := filepath.Join(store, "private")
	listSession(t, filepath.Join(open, "a.jsonl"), "dddd0001", "readable")
	listSession(t, filepath.Join(private, "b.jsonl"), "eeee0001", "hidden")
	for _, d := range []string{base, store, open} {
		noErr(t, os.Chmod(d, 0o755))
	}
	noErr(t, os.Chmod(filepath.Join(open, "a.jsonl"), 0o644))
	noErr(t, os.Chmod(private, 0o700)) // root's: nobody may not enter
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"show", "--store", store, "dddd"}, exitOK, ""},
		{[]string{"show", filepath.Join(private, "b.jsonl")}, exitFailure, "b.jsonl: permission denied"},
		{[]string{"show", "--store", store, "eeee"}, exitFailure, "not among the sessions that could be read (1 directory could not be read): read directory " + private + ": permission denied"},
	}
	for _, c := range cases {
		_, errOut, code := runAsNobody(c.args...)
		if code != c.code || !strings.Contains(errOut, c.err) {
			t.Errorf("%s as nobody: exit %d, want %d; stderr %q, want %q", strings.Join(c.args, " "), code, c.code, errOut, c.err)
		}
	}
}

// asUserDir returns a fresh directory that an ordinary user can reach
// (0755 up to /tmp). It skips the test unless it runs as root.
func asUserDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the CLI as another user")
	}
	d, err := os.MkdirTemp("", "sessctl-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	noErr(t, os.Chmod(d, 0o755))
	return d
}

// asNobody copies the test binary into dir (from asUserDir) and returns a
// function that runs the CLI there as uid and gid 65534.
func asNobody(t *testing.T, dir string) func(args ...string) (stdout, stderr string, code int) {
	t.Helper()
	bin := testenv.CopyBinary(t, dir)
	return func(args ...string) (string, string, int) {
		t.Helper()
		cmd := testenv.CommandAt(bin, "sessctl", args...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}
}
