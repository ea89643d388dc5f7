package adk

import (
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"
)

// newTestService returns a Service on a fresh directory, closed when the
// test ends.
func newTestService(t testing.TB, dir string) *Service {
	t.Helper()
	s, err := New(t.Context(), Options{
		Store:    engine.StoreOptions{Dir: filepath.Join(dir, "sessions"), CacheDir: filepath.Join(dir, "cache")},
		StateDir: filepath.Join(dir, "state"),
		Cwd:      dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// TestServiceSuite runs ADK's own test suite for session services against
// the adapter, with every option that applies: the adapter keeps the
// session ids its callers give and the event ids ADK assigns.
func TestServiceSuite(t *testing.T) {
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{
		SupportsUserProvidedSessionID: true,
		ProvidesServerAssignedEventID: false,
	}, func(t *testing.T) session.Service {
		return newTestService(t, t.TempDir())
	})
}

// TestServiceSuiteAppName runs the suite again with an app name that
// must be escaped to be a directory name (upper case, a space, a slash,
// a dot and a non-ASCII letter).
func TestServiceSuiteAppName(t *testing.T) {
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{
		SupportsUserProvidedSessionID: true,
		AppName:                       "Dev UI/../app ü",
	}, func(t *testing.T) session.Service {
		return newTestService(t, t.TempDir())
	})
}
