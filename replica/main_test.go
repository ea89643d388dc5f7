package replica_test

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests (against a MinIO server shared by them and
// stopped at the end), or a child the kill tests start, and removes what
// the benchmarks left.
func TestMain(m *testing.M) {
	code := testenv.Main(m, map[string]func() int{
		"syncer":      syncer,      // kill_test.go
		"casCounter":  casCounter,  // dir_test.go
		"compacter":   compacter,   // fleetkill_test.go
		"leaseHolder": leaseHolder, // fleetkill_test.go
	})
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}
