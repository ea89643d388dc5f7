package vfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// tree makes the same small tree of files under root in fsys.
func tree(t *testing.T, fsys vfs.FS, root string) {
	t.Helper()
	for _, p := range []string{"a/x.json", "a/y.jsonl", "a/b/z.json", "c.json", "d/e/f.jsonl"} {
		p = filepath.Join(root, filepath.FromSlash(p))
		must(t, fsys.MkdirAll(filepath.Dir(p), vfs.DirMode))
		f, err := fsys.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, vfs.FileMode)
		must(t, err)
		must(t, f.Close())
	}
}

// walked lists what vfs.WalkDir gives fn below root, relative to it,
// skipping directories named "b".
func walked(t *testing.T, fsys vfs.FS, root string) []string {
	t.Helper()
	var out []string
	err := vfs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "b" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	must(t, err)
	return out
}

// TestWalkDirGlobLikeFilepath checks that WalkDir and Glob through the
// real filesystem give what filepath.WalkDir and filepath.Glob give, and
// the same through a CrashFS holding the same tree.
func TestWalkDirGlobLikeFilepath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tree(t, vfs.OS(), root)
	var want []string
	must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "b" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		want = append(want, filepath.ToSlash(rel))
		return nil
	}))
	if got := walked(t, vfs.OS(), root); !slices.Equal(got, want) {
		t.Errorf("WalkDir on the real filesystem: %q, filepath.WalkDir: %q", got, want)
	}
	crash := vfstest.NewCrashFS()
	tree(t, crash, "/r")
	if got := walked(t, crash, "/r"); !slices.Equal(got, want) {
		t.Errorf("WalkDir on a CrashFS: %q, filepath.WalkDir: %q", got, want)
	}
	for _, pat := range []string{"*.json", "a/*.json*", "*/*.json", "*/*/*", "a/[xy].json", "nothing*", "c.json", "gone.json"} {
		want, err := filepath.Glob(filepath.Join(root, pat))
		must(t, err)
		got, err := vfs.Glob(vfs.OS(), filepath.Join(root, pat))
		must(t, err)
		if !slices.Equal(got, want) {
			t.Errorf("Glob(%q) on the real filesystem: %q, filepath.Glob: %q", pat, got, want)
		}
		cgot, err := vfs.Glob(crash, filepath.Join("/r", pat))
		must(t, err)
		for i := range cgot {
			cgot[i] = strings.Replace(cgot[i], filepath.Clean("/r"), root, 1)
		}
		if !slices.Equal(cgot, want) {
			t.Errorf("Glob(%q) on a CrashFS: %q, filepath.Glob: %q", pat, cgot, want)
		}
	}
	if _, err := vfs.Glob(vfs.OS(), filepath.Join(root, "[")); !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("Glob of a bad pattern: %v, want ErrBadPattern", err)
	}
}

// TestWalkDirMissingRoot checks that a missing root is given to fn.
func TestWalkDirMissingRoot(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "gone")
	err := vfs.WalkDir(vfs.OS(), missing, func(p string, d fs.DirEntry, err error) error { return err })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WalkDir of a missing root: %v, want fs.ErrNotExist", err)
	}
}

// TestMkdirRemoveAll checks Mkdir, MkdirTemp and RemoveAll on the real
// filesystem and a CrashFS: Mkdir refuses an existing name, MkdirTemp
// makes fresh directories, RemoveAll takes a whole tree and ignores a
// missing name.
func TestMkdirRemoveAll(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		fsys vfs.FS
		root string
	}{
		"os":    {vfs.OS(), t.TempDir()},
		"crash": {vfstest.NewCrashFS(), "/r"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys, root := c.fsys, c.root
			must(t, fsys.MkdirAll(root, vfs.DirMode))
			d := filepath.Join(root, "d")
			must(t, fsys.Mkdir(d, vfs.DirMode))
			if err := fsys.Mkdir(d, vfs.DirMode); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Mkdir of an existing directory: %v, want fs.ErrExist", err)
			}
			if err := fsys.Mkdir(filepath.Join(root, "no", "such"), vfs.DirMode); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Mkdir below a missing directory: %v, want fs.ErrNotExist", err)
			}
			t1, err := vfs.MkdirTemp(fsys, d, "import-*.tmp")
			must(t, err)
			t2, err := vfs.MkdirTemp(fsys, d, "import-*.tmp")
			must(t, err)
			if t1 == t2 || !strings.HasPrefix(filepath.Base(t1), "import-") || !strings.HasSuffix(t1, ".tmp") {
				t.Errorf("MkdirTemp: %s and %s", t1, t2)
			}
			if fi, err := fsys.Stat(t1); err != nil || !fi.IsDir() || fi.Mode().Perm() != vfs.DirMode {
				t.Errorf("MkdirTemp made %v (%v), want a directory %v", fi, err, vfs.DirMode)
			}
			tree(t, fsys, t1)
			must(t, fsys.RemoveAll(d))
			if _, err := fsys.Stat(d); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("after RemoveAll: %v, want fs.ErrNotExist", err)
			}
			must(t, fsys.RemoveAll(d)) // missing: no error
			if _, err := fsys.Stat(root); err != nil {
				t.Errorf("RemoveAll took the parent: %v", err)
			}
		})
	}
}
