package vfstest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Dump returns every file and directory under root as its path relative
// to root, with '/' on every system -> its contents ("<dir>" for a
// directory), read through fsys only, so a test can compare two
// filesystems (CrashFS after a crash with the expected state, or CrashFS
// with the real one) with one cmp.Diff.
// It fails when a directory cannot be read or its entries are not sorted
// by name, as os.ReadDir sorts them.
func Dump(fsys vfs.FS, root string) (map[string]string, error) {
	out := make(map[string]string)
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return err
		}
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		if !slices.IsSortedFunc(names, strings.Compare) {
			return fmt.Errorf("read directory %s: entries not sorted by name: %q", dir, names)
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel) // the same keys on every system
			if e.IsDir() {
				out[rel] = "<dir>"
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			data, err := fsys.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		}
		return nil
	}
	return out, walk(root)
}
