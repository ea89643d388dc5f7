//go:build unix

package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/demo"
	"github.com/sessctl/sessctl/internal/testenv"
)

// TestDemoTryNext runs 'sessctl demo' as make demo does (./bin/sessctl
// from the directory above bin) and then every command its "Try next"
// section prints, as printed, with sh from the same directory: each must
// work (serve serves the demo session until interrupted), and the last
// removes the kept store (issue 42, item 7: the commands it printed named
// a sessctl that is not on PATH after make build).
func TestDemoTryNext(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sessctl processes")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(testenv.CopyBinary(t, filepath.Join(dir, "bin")), filepath.Join(dir, "bin", "sessctl")); err != nil {
		t.Fatal(err)
	}
	sh := func(line string) *execCmd {
		c := testenv.CommandAt("/bin/sh", "sessctl", "-c", "exec "+line)
		c.Dir = dir
		c.Env = append(c.Env, "TMPDIR="+tmp)
		return c
	}
	for _, keep := range []bool{false, true} {
		line := "./bin/sessctl demo"
		if keep {
			line += " --keep"
		}
		out, err := sh(line).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		_, next, ok := strings.Cut(string(out), "\n== Try next\n")
		if !ok {
			t.Fatalf("%s prints no \"Try next\":\n%s", line, out)
		}
		var root string
		if m := regexp.MustCompile(`The store is kept at (\S+)`).FindStringSubmatch(string(out)); m != nil {
			root = m[1]
		}
		if keep == (root == "") {
			t.Fatalf("%s: kept store %q", line, root)
		}
		for _, l := range strings.Split(strings.TrimRight(next, "\n"), "\n") {
			cmd, _, ok := strings.Cut(strings.TrimPrefix(l, "  "), "  # ")
			if !ok || !strings.HasPrefix(cmd, "./bin/sessctl ") && !strings.HasPrefix(cmd, "rm -r ") {
				t.Errorf("%s: %q is not \"./bin/sessctl ... # what\" (or rm -r)", line, l)
				continue
			}
			if strings.Contains(cmd, " serve ") {
				serveDemo(t, sh(l))
				continue
			}
			if out, err := sh(l).CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", l, err, out)
			}
		}
		if root != "" {
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("the store %s is still there after the commands: %v", root, err)
			}
		}
	}
}

// execCmd is a command sh runs.
type execCmd = exec.Cmd

// serveDemo starts the printed serve command, gets the page its URL
// names, which lists the demo session, and interrupts it.
func serveDemo(t *testing.T, c *execCmd) {
	t.Helper()
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = io.Discard
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	if url == "" {
		t.Fatalf("serve printed %q, no URL", line)
	}
	jar, _ := cookiejar.New(nil) // the token in the URL becomes a cookie
	resp, err := (&http.Client{Jar: jar}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), demo.Name) {
		t.Errorf("serve's page: %d, without %q", resp.StatusCode, demo.Name)
	}
	c.Process.Signal(syscall.SIGINT)
	if err := c.Wait(); err != nil {
		t.Errorf("serve, interrupted: %v", err)
	}
}
