//go:build unix

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLstatNames checks LstatNames against Lstat of each path, for every
// kind of entry a store's directory may hold and a name that is gone.
func TestLstatNames(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, data string, perm fs.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), perm); err != nil {
			t.Fatal(err)
		}
	}
	mk("a.jsonl", "{}\n", 0o600)
	mk("b.jsonl", "", 0o640)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.jsonl", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"a.jsonl", "b.jsonl", "sub", "gone.jsonl", "link.jsonl", "fifo.jsonl"}
	for _, fsys := range []FS{OS(), plainFS{OS()}} {
		seen := 0
		LstatNames(fsys, dir, names, func(i int, a Attr, err error) {
			if i != seen {
				t.Fatalf("%T: name %d given as %d", fsys, seen, i)
			}
			seen++
			p := filepath.Join(dir, names[i])
			fi, werr := os.Lstat(p)
			if werr != nil {
				var pe *fs.PathError
				if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != p {
					t.Errorf("%T: %s: err %v, want one naming %s that is fs.ErrNotExist", fsys, names[i], err, p)
				}
				return
			}
			if err != nil {
				t.Fatalf("%T: %s: %v", fsys, names[i], err)
			}
			if want := AttrOf(fi); a != want {
				t.Errorf("%T: %s: %+v, want %+v", fsys, names[i], a, want)
			}
		})
		if seen != len(names) {
			t.Errorf("%T: fn called %d times for %d names", fsys, seen, len(names))
		}
	}
	// A directory that is not there: each name's error, as Lstat's.
	n := 0
	LstatNames(OS(), filepath.Join(dir, "nope"), []string{"x", "y"}, func(i int, _ Attr, err error) {
		n++
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing dir, name %d: %v", i, err)
		}
	})
	if n != 2 {
		t.Errorf("missing dir: fn called %d times", n)
	}
}

// plainFS hides OS behind another type: LstatNames takes its Lstat path.
type plainFS struct{ FS }
