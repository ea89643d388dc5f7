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
	// Caches (the list index) go to a temporary directory, not the
	// user's; children inherit it.
	var cache string
	if os.Getenv("SESSCTL_TEST_CACHE") == "" { // not a child process
		// pi (both releases) stays where it was found before the cache moved.
		if os.Getenv("SESSCTL_PI_MODULES") == "" {
			os.Setenv("SESSCTL_PI_MODULES", testenv.PiDir())
		}
		if os.Getenv("SESSCTL_PI058_MODULES") == "" {
			os.Setenv("SESSCTL_PI058_MODULES", testenv.PiCorpusDir())
		}
		var err error
		if cache, err = os.MkdirTemp("", "engine-test-cache"); err != nil {
			panic(err)
		}
		os.Setenv("XDG_CACHE_HOME", cache)
		os.Setenv("SESSCTL_TEST_CACHE", cache)
	}
	code := testenv.Main(m, map[string]func() int{
		"appender": appender, // kill_test.go
	})
	if benchFiles.tmp != "" {
		os.RemoveAll(benchFiles.tmp)
	}
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}
