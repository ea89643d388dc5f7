package main

import (
	"os"
	"path/filepath"
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
		// No test writes to the stores of the machine it runs on: the
		// agents' directories (pi's, indusagi's, AgentUse's) are
		// below a temporary home unless a test names its own.
		home := filepath.Join(cache, "home")
		if err := os.MkdirAll(home, 0o700); err != nil {
			panic(err)
		}
		os.Setenv("HOME", home)
		os.Setenv("USERPROFILE", home)
		os.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
		// And the other agents' (the importers' sources), as isolate does.
		for _, k := range []string{"PI_CODING_AGENT_DIR", "INDUSAGI_AGENT_DIR", "INDUSAGI_CODING_AGENT_DIR", "INDUSAGI_DIR",
			"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "WINDSURF_SESSIONS_DIR", "OPENCODE_DB", "GOOSE_PATH_ROOT", "CRUSH_GLOBAL_DATA"} {
			os.Unsetenv(k)
		}
	}
	code := testenv.Main(m, map[string]func() int{
		"sessctl": func() int { main(); return exitOK },
	})
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}
