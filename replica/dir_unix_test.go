//go:build unix

package replica_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// plantSpecial makes, in dir, a symbolic link to the object file 0123
// beside it and a named pipe, and returns their names.
func plantSpecial(t testing.TB, dir string) []string {
	t.Helper()
	if err := os.Symlink(filepath.Join(dir, "0123"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"link", "pipe"}
}
