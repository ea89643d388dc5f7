package release

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Version is the newest release CHANGELOG.md records, and its API file
// exists: a release that forgets to raise it fails here.
func TestVersionIsTheNewestRelease(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindSubmatch(data)
	if m == nil {
		t.Fatal("CHANGELOG.md names no release")
	}
	if string(m[1]) != Version {
		t.Errorf("release.Version is %s, the newest release in CHANGELOG.md %s", Version, m[1])
	}
	if _, err := os.Stat(filepath.Join(root, "api", "v"+Version+".txt")); err != nil {
		t.Errorf("no API file for release %s: %v", Version, err)
	}
	if !Dev && regexp.MustCompile(`(?m)^## \[Unreleased\]\n+###`).Match(data) {
		t.Errorf("release.Dev is false, but CHANGELOG.md lists unreleased changes")
	}
}
