//go:build !linux

package testenv

import (
	"os"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes for the test; only Linux has one to
// mount, so elsewhere the test is skipped, or fails when
// SESSCTL_REQUIRE_TMPFS=1.
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	msg := "a tmpfs can only be mounted on Linux"
	if os.Getenv("SESSCTL_REQUIRE_TMPFS") == "1" {
		t.Fatalf("SESSCTL_REQUIRE_TMPFS=1 but %s", msg)
	}
	t.Skipf("skipping: %s", msg)
	return ""
}
