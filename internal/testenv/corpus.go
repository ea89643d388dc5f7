package testenv

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireConformance is the variable CI sets to make every corpus skip a
// failure.
const requireConformance = "SESSCTL_REQUIRE_CONFORMANCE"

// RepoRoot returns the directory holding the main module's go.mod (not a
// nested module's, such as adk/), walking up from the test's working
// directory (its package directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		// The main module's go.mod, not a nested module's (adk/).
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/sessctl/sessctl\n")) {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = up
	}
}

// CorpusPath returns <repository>/../shared/conformance/<parts...>, where
// the conformance corpora live beside the checkout, whether or not it
// exists.
func CorpusPath(t testing.TB, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{RepoRoot(t), "..", "shared", "conformance"}, parts...)...)
}

// Corpus returns CorpusPath(parts...). When it is absent the test is
// skipped, saying so, or fails when SESSCTL_REQUIRE_CONFORMANCE=1.
func Corpus(t testing.TB, parts ...string) string {
	t.Helper()
	p := CorpusPath(t, parts...)
	if !present(t, p) {
		t.Skipf("conformance corpus %s not found; skipping (it lives beside the checkout in ../shared)", p)
	}
	return p
}

// present reports whether the corpus at p exists, failing the test when
// it does not and SESSCTL_REQUIRE_CONFORMANCE=1.
func present(t testing.TB, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && os.Getenv(requireConformance) == "1" {
		t.Fatalf("conformance corpus %s is required (%s=1) but missing: %v", p, requireConformance, err)
	}
	return err == nil
}

// CorpusFiles returns the contents of every file under CorpusPath(parts...)
// whose slash-separated path keep accepts, in path order, for fuzz seeds.
// When the corpus is absent it logs that and returns nil, so a fuzz target
// still runs on its own fixtures; it fails instead when
// SESSCTL_REQUIRE_CONFORMANCE=1.
func CorpusFiles(t testing.TB, keep func(path string) bool, parts ...string) [][]byte {
	t.Helper()
	root := CorpusPath(t, parts...)
	if !present(t, root) {
		t.Logf("conformance corpus %s not found; seeding from the fixtures only", root)
		return nil
	}
	var out [][]byte
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(filepath.ToSlash(p)) {
			return err
		}
		data, err := os.ReadFile(p)
		out = append(out, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Suffix returns a CorpusFiles filter that keeps paths ending in suffix.
func Suffix(suffix string) func(path string) bool {
	return func(p string) bool { return strings.HasSuffix(p, suffix) }
}
