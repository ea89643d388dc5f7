package search

import (
	"fmt"
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the suite against the engine SESSCTL_SEARCH_ENGINE names
// ("fts5", "own"; unset: the default), so that each engine passes the
// same tests.
func TestMain(m *testing.M) {
	if e, err := ParseEngine(os.Getenv("SESSCTL_SEARCH_ENGINE")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	} else if e != EngineDefault {
		defaultEngine = e
	}
	os.Exit(testenv.Main(m, map[string]func() int{"searcher": searcher, "rebuilder": rebuilder}))
}
