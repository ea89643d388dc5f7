package main

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or sessctl itself when a test started this
// binary as the child "sessctl" (testenv.Command) to have it as a real
// process (signals, pipes, another user), with os.Args[1:] as its
// arguments.
//
// The user cache directory (the list index) is a temporary one, which
// the children inherit.
func TestMain(m *testing.M) {
	var cache string
	if os.Getenv("SESSCTL_TEST_CACHE") == "" { // not a child process
		// pi and MinIO stay where they were found before the cache
		// moved.
		if os.Getenv("SESSCTL_PI_MODULES") == "" {
			os.Setenv("SESSCTL_PI_MODULES", testenv.PiDir())
		}
		if os.Getenv("SESSCTL_PI058_MODULES") == "" {
			os.Setenv("SESSCTL_PI058_MODULES", testenv.PiCorpusDir())
		}
		if os.Getenv("SESSCTL_MINIO") == "" {
			os.Setenv("SESSCTL_MINIO", testenv.MinIOBin())
		}
		var err error
		if cache, err = os.MkdirTemp("", "sessctl-test-cache"); err != nil {
			panic(err)
		}
		os.Setenv("XDG_CACHE_HOME", cache)
		os.Setenv("SESSCTL_TEST_CACHE", cache)
	}
	code := testenv.Main(m, map[string]func() int{
		"sessctl": func() int { main(); return exitOK },
	})
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}
