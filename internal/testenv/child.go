package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// childEnv names the child a test binary runs as, instead of its tests.
const childEnv = "SESSCTL_TEST_CHILD"

// Main runs the test binary: as the child named by the environment when
// Command started it (the child's result is the exit status), else the
// tests. A package whose tests start children calls it from its TestMain,
// in main_test.go:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, map[string]func() int{"appender": appender}))
//	}
//
// The choice is made before the test flags are parsed, so a child gets
// its own arguments in os.Args[1:] untouched. An unknown name panics.
func Main(m *testing.M, children map[string]func() int) int {
	name := os.Getenv(childEnv)
	if name == "" {
		defer stopShared() // the MinIO server the tests shared, if any
		return m.Run()
	}
	child, ok := children[name]
	if !ok {
		panic("testenv: this test binary has no child named " + name)
	}
	return child()
}

// Command returns the command that runs this test binary as the child
// name, with args as its arguments and the test's environment. The race
// detector's exit delay is turned off: children exit often.
func Command(name string, args ...string) *exec.Cmd {
	return CommandAt(os.Args[0], name, args...)
}

// CommandAt is Command for a copy of the test binary at bin (see
// CopyBinary).
func CommandAt(bin, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), childEnv+"="+name, "GORACE="+gorace)
	return cmd
}

// CopyBinary copies the test binary into dir, executable by everyone, and
// returns the copy's path: a child run as another user cannot reach the
// test binary where go test left it.
func CopyBinary(t testing.TB, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
