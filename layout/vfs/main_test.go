//go:build unix

package vfs_test

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or the child that rewrites files as another
// user (attrs_test.go, Unix only).
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, map[string]func() int{"rewrite-all": rewriteAll}))
}
