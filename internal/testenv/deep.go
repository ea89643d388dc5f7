package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// DeepChain makes a chain of nested directories below parent, directory
// i at name(i) (a relative path: it may have several components) below
// the one before, through os.Root (the system's *at calls), so that the
// chain goes deeper than any path the system will open (PATH_MAX). fill,
// when not nil, is called in each directory. It stops at the first
// directory whose path the system refuses as too long and returns that
// path: a real directory no one, root included, can read by its path,
// while every directory above it can be read. It skips the test where
// paths have no such limit.
func DeepChain(t testing.TB, parent string, name func(i int) string, fill func(dir *os.Root, i int)) string {
	t.Helper()
	r, err := os.OpenRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	path := parent
	for i := 0; i < 10000; i++ {
		rel := name(i)
		if err := r.MkdirAll(rel, 0o700); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot(rel)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
		path = filepath.Join(path, rel)
		if fill != nil {
			fill(r, i)
		}
		if _, err := os.Stat(path); errors.Is(err, syscall.ENAMETOOLONG) {
			r.Close()
			return path
		}
	}
	r.Close()
	t.Skip("paths of any length can be opened here")
	return ""
}
