package testenv

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory and
// returns it; it is unmounted when the test ends. A small one is a real
// full disk: writes store what fits and fail with ENOSPC. Mounting needs
// root (or CAP_SYS_ADMIN); where it is not permitted the test is skipped
// with a message saying so, or fails when SESSCTL_REQUIRE_TMPFS=1 (CI).
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		msg := "mounting a tmpfs on " + dir + " is not permitted here (it needs root): " + err.Error()
		if os.Getenv("SESSCTL_REQUIRE_TMPFS") == "1" {
			t.Fatalf("SESSCTL_REQUIRE_TMPFS=1 but %s", msg)
		}
		t.Skipf("skipping: %s", msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
