package engine_test

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or one of the children they start as real
// processes (testenv.Command), and removes the workloads the benchmarks
// generated.
func TestMain(m *testing.M) {
	code := testenv.Main(m, map[string]func() int{
		"appender": appender, // kill_test.go
	})
	if benchFiles.tmp != "" {
		os.RemoveAll(benchFiles.tmp)
	}
	os.Exit(code)
}
