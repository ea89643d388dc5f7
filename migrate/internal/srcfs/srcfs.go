// Package srcfs holds the small filesystem helpers the importers share to
// find and open a foreign agent's files. Every one goes through a vfs.FS
// (migrate.ImportOptions.FS; nil means vfs.OS()), so that a test's FS
// reaches the importers too.
package srcfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Or returns fsys, or the real filesystem when it is nil.
func Or(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return vfs.OS()
	}
	return fsys
}

// IsDir reports whether p is a directory (following symbolic links).
func IsDir(fsys vfs.FS, p string) bool {
	st, err := Or(fsys).Stat(p)
	return err == nil && st.IsDir()
}

// Stat is fsys's Stat (following symbolic links).
func Stat(fsys vfs.FS, p string) (fs.FileInfo, error) { return Or(fsys).Stat(p) }

// ReadDir is fsys's ReadDir.
func ReadDir(fsys vfs.FS, p string) ([]fs.DirEntry, error) { return Or(fsys).ReadDir(p) }

// Glob is filepath.Glob through fsys (see vfs.Glob): the matches, sorted
// within each directory; a malformed pattern matches nothing.
func Glob(fsys vfs.FS, pattern string) []string {
	m, _ := vfs.Glob(Or(fsys), pattern)
	return m
}

// WalkDir is filepath.WalkDir through fsys (see vfs.WalkDir).
func WalkDir(fsys vfs.FS, root string, fn fs.WalkDirFunc) error {
	return vfs.WalkDir(Or(fsys), root, fn)
}

// Find returns the files under root that match accepts, in walk order.
// maxDepth > 0 leaves out directories more than maxDepth levels below
// root; first stops at the first match (for Detect). An error reading root
// itself is returned; errors below it skip the entry.
func Find(fsys vfs.FS, root string, maxDepth int, first bool, match func(d fs.DirEntry) bool) ([]string, error) {
	var out []string
	errFound := errors.New("found")
	err := WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if maxDepth > 0 && p != root && strings.Count(strings.TrimPrefix(p, root), string(filepath.Separator)) > maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if match(d) {
			out = append(out, p)
			if first {
				return errFound
			}
		}
		return nil
	})
	if err != nil && err != errFound {
		return nil, err
	}
	return out, nil
}

// Open opens a source file for reading. On the real filesystem only a
// regular file is opened: a named pipe, socket or device with a source's
// file name is refused at once with an error naming it, instead of
// waiting forever for a writer (see vfs.OpenRegular).
func Open(fsys vfs.FS, path string) (vfs.File, error) {
	return Or(fsys).OpenFile(path, os.O_RDONLY, 0)
}

// ReadFile reads a whole source file, which must be a regular file (see
// Open).
func ReadFile(fsys vfs.FS, path string) ([]byte, error) { return Or(fsys).ReadFile(path) }

// IsFile reports whether p is a regular file (following symbolic links).
func IsFile(fsys vfs.FS, p string) bool {
	st, err := Or(fsys).Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// OpenTracked is Open for a session's data: when progress is not nil,
// every read of the returned file reports the bytes read so far and the
// file's size (as it was when opened).
func OpenTracked(fsys vfs.FS, path string, progress func(path string, done, total int64)) (io.ReadCloser, error) {
	f, err := Open(fsys, path)
	if err != nil {
		return nil, err
	}
	if progress == nil {
		return f, nil
	}
	t := &tracked{f: f, path: path, progress: progress}
	if st, err := f.Stat(); err == nil {
		t.size = st.Size()
	}
	progress(path, 0, t.size)
	return t, nil
}

// ReadFileTracked is ReadFile for a session's data, reporting progress as
// OpenTracked does.
func ReadFileTracked(fsys vfs.FS, path string, progress func(path string, done, total int64)) ([]byte, error) {
	if progress == nil {
		return ReadFile(fsys, path)
	}
	f, err := OpenTracked(fsys, path, progress)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

type tracked struct {
	f        vfs.File
	path     string
	size     int64
	done     int64
	progress func(path string, done, total int64)
}

func (t *tracked) Read(p []byte) (int, error) {
	n, err := t.f.Read(p)
	if n > 0 {
		t.done += int64(n)
		t.progress(t.path, t.done, max(t.size, t.done))
	}
	return n, err
}

func (t *tracked) Close() error { return t.f.Close() }
