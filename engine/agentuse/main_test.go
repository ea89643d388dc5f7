package agentuse_test

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or the writer process that
// TestConcurrentProcesses starts twice (store_test.go).
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, map[string]func() int{"writer": writer}))
}
