//go:build unix

package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// A socket named *.jsonl is "not a regular file", like a named pipe
// (its open used to say "no such device or address"); a label on either,
// or on a file that is not a session, fails without leaving a lock file
// beside it; and migrate exits 1, not
// 4 ("corrupt"), for files that failed for another reason than their
// content: a special file, a read-only file, a full disk.
func TestNotASessionFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.jsonl")
	mkfifo(t, fifo)
	sock := filepath.Join(dir, "s.jsonl")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer l.Close()
	ro := writeV1(t, dir, "ro.jsonl", 1)
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	notRegular := "not a regular file"
	for _, p := range []string{fifo, sock} {
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"show", p}, exitFailure},
			{[]string{"label", p, "abc", "x"}, exitFailure},
			{[]string{"name", p, "x"}, exitFailure},
			{[]string{"migrate", p}, exitFailure},
		} {
			_, errOut, code := runWithin(t, c.args...)
			if code != c.code || !strings.Contains(errOut, p) || !strings.Contains(errOut, notRegular) {
				t.Errorf("sessctl %s: exit %d, want %d; stderr %q, want the path and %q", strings.Join(c.args, " "), code, c.code, errOut, notRegular)
			}
		}
		if _, err := os.Lstat(p + ".lock"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a lock file was left beside %s (%v)", p, err)
		}
	}
	// Another program's JSONL (no session header) is corrupt as a
	// session: refused, and no lock file is left beside it either.
	other := filepath.Join(dir, "claude.jsonl")
	if err := os.WriteFile(other, []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runWithin(t, "label", other, "u1", "x"); code != exitCorrupt {
		t.Errorf("label of another program's JSONL: exit %d, want %d\n%s", code, exitCorrupt, errOut)
	}
	if _, err := os.Lstat(other + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock file was left beside %s (%v)", other, err)
	}
	if _, errOut, code := runWithin(t, "migrate", ro); code != exitFailure || !strings.Contains(errOut, "read-only") {
		t.Errorf("migrate of a read-only file: exit %d, want %d\n%s", code, exitFailure, errOut)
	}
}

// migrate on a full disk (a real tmpfs, too small for the rewrite)
// exits 1, and leaves the file and the directory as they were.
func TestMigrateOnAFullDisk(t *testing.T) {
	dir := testenv.Tmpfs(t, 600<<10)
	v1 := writeV1(t, dir, "v1.jsonl", 1)
	before, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	// Leave less room than the rewrite needs.
	filler := filepath.Join(dir, "filler")
	f, err := os.OpenFile(filler, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	size := int64(0)
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size - int64(len(before))/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, errOut, code := runWithin(t, "migrate", v1)
	if code != exitFailure || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("migrate on a full disk: exit %d, want %d\n%s", code, exitFailure, errOut)
	}
	if after, _ := os.ReadFile(v1); string(after) != string(before) {
		t.Error("the file changed")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) != 3 { // v1.jsonl, its lock, filler
		t.Errorf("files left: %v", names)
	}
}
