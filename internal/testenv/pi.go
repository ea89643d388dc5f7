package testenv

// The pi releases and Node, for tests that run the reference
// implementation beside sessctl. pi is published on npm as
// @earendil-works/pi-coding-agent from 1.0 on, and as
// @mariozechner/pi-coding-agent up to 0.73.1.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PiVersion is the reference pi release: the newest one, whose behaviour
// sessctl follows. scripts/pi-install.sh names it too.
const PiVersion = "1.6.0"

// PiCorpusVersion is the pi release the conformance corpus
// (../shared/conformance/pi) was recorded with; it stays tested wherever
// it agrees with PiVersion.
const PiCorpusVersion = "0.58.3"

// Pi returns the node binary and the folder where the reference pi was
// npm-installed (the one holding node_modules): $SESSCTL_PI_MODULES, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi, where scripts/pi-install.sh
// installs it. The release found there must be PiVersion, or
// $SESSCTL_PI_VERSION when that is set (scripts/pi-compat.sh sets it to run
// the tests against another release). When node or that release is
// missing the test is skipped with a message saying how to install them,
// or fails when SESSCTL_REQUIRE_PI=1 (CI sets it).
func Pi(t testing.TB) (node, modules string) {
	t.Helper()
	want := PiVersion
	if v := os.Getenv("SESSCTL_PI_VERSION"); v != "" {
		want = v
	}
	return piAt(t, PiDir(), want, "SESSCTL_PI_MODULES", "")
}

// PiCorpus is Pi for PiCorpusVersion, found in $SESSCTL_PI058_MODULES,
// else ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/pi-0.58.3.
func PiCorpus(t testing.TB) (node, modules string) {
	t.Helper()
	return piAt(t, PiCorpusDir(), PiCorpusVersion, "SESSCTL_PI058_MODULES", " "+PiCorpusVersion)
}

func piAt(t testing.TB, modules, want, env, arg string) (string, string) {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH (Node.js 20 or later is needed)"
	default:
		have := piInstalledAs(modules, PiPackage(want))
		switch {
		case have == "":
			missing = "pi " + want + " is not installed in " + modules + " (run scripts/pi-install.sh" + arg + ", or set " + env + ")"
		case have != want:
			missing = modules + " holds pi " + have + ", not " + want + " (run scripts/pi-install.sh" + arg + ", or set " + env + ")"
		}
	}
	if missing != "" {
		if os.Getenv("SESSCTL_REQUIRE_PI") == "1" {
			t.Fatalf("SESSCTL_REQUIRE_PI=1 but %s", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	return node, modules
}

// PiPackage is the npm package pi version is published under:
// @earendil-works/pi-coding-agent from 1.0 on, @mariozechner/pi-coding-agent
// before (scripts/pi-install.sh decides the same way).
func PiPackage(version string) string {
	if strings.HasPrefix(version, "0.") {
		return "@mariozechner/pi-coding-agent"
	}
	return "@earendil-works/pi-coding-agent"
}

// PiPackageDir is the folder of the pi package installed in modules (its
// package.json and dist): @earendil-works/pi-coding-agent when there is
// one, else @mariozechner/pi-coding-agent.
func PiPackageDir(modules string) string {
	for _, name := range []string{PiPackage("1.0.0"), PiPackage("0.0.0")} {
		dir := filepath.Join(modules, "node_modules", filepath.FromSlash(name))
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
			return dir
		}
	}
	return filepath.Join(modules, "node_modules", filepath.FromSlash(PiPackage(PiVersion)))
}

// PiInstalled returns the version of pi npm-installed in modules (the
// package PiPackageDir finds), "" when there is none.
func PiInstalled(modules string) string {
	return piPackageVersion(filepath.Join(PiPackageDir(modules), "package.json"))
}

func piInstalledAs(modules, name string) string {
	return piPackageVersion(filepath.Join(modules, "node_modules", filepath.FromSlash(name), "package.json"))
}

func piPackageVersion(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// PiDir is the folder Pi looks in.
func PiDir() string { return piDir("SESSCTL_PI_MODULES", "pi") }

// PiCorpusDir is the folder PiCorpus looks in.
func PiCorpusDir() string { return piDir("SESSCTL_PI058_MODULES", "pi-"+PiCorpusVersion) }

func piDir(env, name string) string {
	if d := os.Getenv(env); d != "" {
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
	return filepath.Join(cache, "sessctl", name)
}
