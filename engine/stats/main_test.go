package stats_test

import (
	"os"
	"testing"
)

// TestMain runs the tests with the caches (the stats index) in a
// temporary directory, not the user's.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "stats-test-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
