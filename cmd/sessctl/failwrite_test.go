package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A command that fails leaves the session file byte for byte as it was,
// and writes nothing beside it: the repairs a write-mode open needs wait
// for the first write, which a failed command never reaches.
func TestFailedCommandsChangeNothing(t *testing.T) {
	_, cwd := mutStore(t)
	torn := func(t *testing.T) string {
		src, _ := mutSession(t, cwd)
		f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"message","id":"torn","parentId":null,"mes`)
		f.Close()
		return src
	}
	empty := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "empty.jsonl")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		file func(t *testing.T) string
		args []string // after the session
		sh   bool
		code int
	}{
		{"label of an unknown entry, torn tail", torn, []string{"label", "nosuchid", "x"}, false, exitNotFound},
		{"branch to an unknown entry, torn tail", torn, []string{"branch", "nosuchid"}, false, exitNotFound},
		{"failing summary command, torn tail", torn, []string{"compact", "--keep-tokens", "30", "--summary-cmd", "exit 1"}, true, exitFailure},
		{"label on an empty file", empty, []string{"label", "nosuchid", "x"}, false, exitNotFound},
		{"branch on an empty file", empty, []string{"branch", "nosuchid"}, false, exitNotFound},
		{"compact of an empty file", empty, []string{"compact"}, false, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.sh && runtime.GOOS == "windows" {
				t.Skip("needs sh")
			}
			src := c.file(t)
			dir := filepath.Dir(src)
			before := mustRead(t, src)
			names := func() []string {
				m, _ := filepath.Glob(filepath.Join(dir, "*"))
				var out []string
				for _, n := range m {
					if !strings.HasSuffix(n, ".lock") {
						out = append(out, filepath.Base(n))
					}
				}
				return out
			}
			listed := strings.Join(names(), " ")
			args := append([]string{c.args[0], src}, c.args[1:]...)
			_, errOut, code := mutRun(t, "", args...)
			if code == exitOK || (c.code >= 0 && code != c.code) {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, errOut)
			}
			if after := mustRead(t, src); after != before {
				t.Errorf("the session file changed:\n%q\nwas\n%q", after, before)
			}
			if now := strings.Join(names(), " "); now != listed {
				t.Errorf("files beside the session: %s, were %s", now, listed)
			}
		})
	}
}

// branch onto an entry inside a parent-id loop is refused (pi would never
// finish loading the file), exit 4, naming the file and the entry.
func TestBranchIntoAParentLoop(t *testing.T) {
	dir := t.TempDir()
	src := writeSession(t, dir, []string{
		eLine("a1", "", `{"role":"user","content":"q","timestamp":1}`),
		eLine("x1", "y1", `{"role":"user","content":"x","timestamp":1}`),
		eLine("y1", "x1", `{"role":"user","content":"y","timestamp":1}`),
		eLine("b1", "a1", `{"role":"user","content":"b","timestamp":1}`),
	})
	before := mustRead(t, src)
	_, errOut, code := mutRun(t, "", "branch", src, "y1")
	if code != exitCorrupt || !strings.Contains(errOut, src) || !strings.Contains(errOut, "parent-id loop at entry y1") || !strings.Contains(errOut, "hint:") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	if mustRead(t, src) != before {
		t.Error("the session file changed")
	}
	if _, errOut, code := mutRun(t, "", "branch", src, "a1"); code != exitOK {
		t.Errorf("branch to an entry outside the loop: exit %d, %s", code, errOut)
	}
}

// verify notes the temporary files an interrupted write (a SIGKILLed
// migrate) left beside a session, without failing it.
func TestVerifyNotesStaleTempFiles(t *testing.T) {
	_, cwd := mutStore(t)
	src, _ := mutSession(t, cwd)
	if err := os.WriteFile(src+".tmp-0123456789abcdef", []byte("half a migration"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := mutRun(t, "", "verify", src)
	if code != exitOK || !strings.Contains(out, "note: temp-file: "+filepath.Base(src)+".tmp-0123456789abcdef (16 bytes)") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// A write that finds the last line unfinished while another process (pi,
// which takes no lock) holds the file open for writing waits for it, then
// exits 3 naming the process, and leaves the file alone.
func TestWriteBesideABusyWriter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finding a file's writers needs Linux's /proc")
	}
	_, cwd := mutStore(t)
	src, ids := mutSession(t, cwd)
	w, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(`{"type":"message","id":"busy","parentId":null,"mes`); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, src)
	_, errOut, code := mutRun(t, "", "label", src, ids[0], "x")
	if code != exitLocked || !strings.Contains(errOut, "is being written by pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(errOut, "hint:") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if mustRead(t, src) != before {
		t.Error("the session file changed")
	}
}
