package vfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
)

// TestOpenRegularBlocks checks that the O_NONBLOCK used to open without
// waiting is cleared again on the regular file returned.
func TestOpenRegularBlocks(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := vfs.OpenRegular(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if fl&syscall.O_NONBLOCK != 0 {
		t.Errorf("file flags %#o still have O_NONBLOCK", fl)
	}
}
