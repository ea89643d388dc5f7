//go:build unix

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMigrateKeepsAttrs: a migrated file keeps its mode, owner and group;
// a read-only one is refused and left as it was, even for root; and a
// dry run reports the refusal too.
func TestMigrateKeepsAttrs(t *testing.T) {
	gid := -1
	if os.Geteuid() == 0 {
		gid = 1 // a group other than the process's
	}
	cases := []struct {
		mode fs.FileMode
		gid  int
		ok   bool
	}{
		{0o640, gid, true},
		{0o644, -1, true},
		{0o444, -1, false},
	}
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			p := writeV1(t, dir, "s.jsonl", 7)
			if c.gid >= 0 {
				noErr(t, os.Chown(p, -1, c.gid))
			}
			noErr(t, os.Chmod(p, c.mode))
			before, _ := os.ReadFile(p)
			st0 := statOf(t, p)

			_, errOut, code := sessctl(t, "migrate", "--dry-run", p)
			if c.ok != (code == exitOK) {
				t.Errorf("dry run: exit %d, stderr %s", code, errOut)
			}
			out, errOut, code := sessctl(t, "migrate", p)
			st := statOf(t, p)
			if st.Mode&0o777 != st0.Mode&0o777 || st.Uid != st0.Uid || st.Gid != st0.Gid {
				t.Errorf("mode/owner/group %o %d:%d, want %o %d:%d", st.Mode&0o777, st.Uid, st.Gid, st0.Mode&0o777, st0.Uid, st0.Gid)
			}
			after, _ := os.ReadFile(p)
			if c.ok {
				if code != exitOK || !strings.Contains(out, "migrated v1 -> v3") || bytes.Equal(after, before) {
					t.Errorf("exit %d, stdout %s, stderr %s", code, out, errOut)
				}
				return
			}
			if code == exitOK || !bytes.Equal(after, before) {
				t.Errorf("read-only file: exit %d and the file changed: %v", code, !bytes.Equal(after, before))
			}
			if !strings.Contains(errOut, "read-only") || strings.Count(errOut, p) != 1 {
				t.Errorf("stderr should name the file once and say it is read-only:\n%s", errOut)
			}
			if _, err := os.Stat(p + ".lock"); err == nil {
				t.Error("a refused file was locked (lock file created)")
			}
			if _, err := os.Stat(p + ".v1.bak"); err == nil {
				t.Error("a refused file got a backup")
			}
		})
	}
}

// TestMigrateCurrentFilesUnlocked: files already at version 3 are read,
// not locked (no lock file appears beside them), each path is printed
// once, and a failure names its file once.
func TestMigrateCurrentFilesUnlocked(t *testing.T) {
	dir := t.TempDir()
	cur := filepath.Join(dir, "cur.jsonl")
	noErr(t, os.WriteFile(cur, []byte(`{"type":"session","version":3,"id":"c","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o600))
	bad := filepath.Join(dir, "v4.jsonl")
	noErr(t, os.WriteFile(bad, []byte(`{"type":"session","version":4,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o600))
	out, errOut, code := sessctl(t, "migrate", dir)
	if code != exitCorrupt {
		t.Errorf("exit %d, want 4 for the v4 file", code)
	}
	if strings.Count(out, cur) != 1 || !strings.Contains(out, cur+": v3, nothing to do") {
		t.Errorf("stdout should have one line for %s:\n%s", cur, out)
	}
	if strings.Count(errOut, bad) != 1 {
		t.Errorf("stderr should name %s once:\n%s", bad, errOut)
	}
	for _, p := range []string{cur, bad} {
		if _, err := os.Stat(p + ".lock"); err == nil {
			t.Errorf("%s was locked though it needs no migration", p)
		}
	}
}

func statOf(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

// TestMigrateWaitBoundsOnlyTheLock: --wait D is how long to wait for a
// held session, not a limit on the migration: with the session free, even
// the shortest wait migrates it (it used to be the deadline of the whole
// run, so a migration longer than D failed).
func TestMigrateWaitBoundsOnlyTheLock(t *testing.T) {
	p := writeV1(t, t.TempDir(), "s.jsonl", 9)
	out, errOut, code := sessctl(t, "migrate", "--wait", "1ns", p)
	if code != exitOK || !strings.Contains(out, "migrated v1 -> v3") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}
