package testenv

// pi 0.58.3 (@mariozechner/pi-coding-agent) and Node, for tests that run
// the reference implementation beside sessctl.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PiVersion is the pi version the tests run.
const PiVersion = "0.58.3"

// Pi returns the node binary and the folder where pi was npm-installed
// (the one holding node_modules): $SESSCTL_PI_MODULES, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi, where scripts/pi-install.sh
// installs it. When either is missing the test is skipped with a message
// saying how to install them, or fails when SESSCTL_REQUIRE_PI=1 (CI sets
// it).
func Pi(t testing.TB) (node, modules string) {
	t.Helper()
	modules = PiDir()
	pkg := filepath.Join(modules, "node_modules", "@mariozechner", "pi-coding-agent", "package.json")
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH (Node.js 20 or later is needed)"
	case !exists(pkg):
		missing = "pi " + PiVersion + " is not installed in " + modules + " (run scripts/pi-install.sh, or set SESSCTL_PI_MODULES)"
	}
	if missing != "" {
		if os.Getenv("SESSCTL_REQUIRE_PI") == "1" {
			t.Fatalf("SESSCTL_REQUIRE_PI=1 but %s", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	return node, modules
}

// PiDir is the folder Pi looks in.
func PiDir() string {
	if d := os.Getenv("SESSCTL_PI_MODULES"); d != "" {
		if filepath.Base(d) == "node_modules" {
			return filepath.Dir(d)
		}
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "sessctl", "pi")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
