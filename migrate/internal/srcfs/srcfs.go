// Package srcfs holds the small filesystem helpers the importers share to
// find and open a foreign agent's files.
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

// IsDir reports whether p is a directory (following symbolic links).
func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Find returns the files under root that match accepts, in walk order.
// maxDepth > 0 leaves out directories more than maxDepth levels below
// root; first stops at the first match (for Detect). An error reading root
// itself is returned; errors below it skip the entry.
func Find(root string, maxDepth int, first bool, match func(d fs.DirEntry) bool) ([]string, error) {
	var out []string
	errFound := errors.New("found")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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

// Open opens a source file for reading. Only a regular file is opened: a
// named pipe, socket or device with a source's file name is refused at
// once with an error naming it, instead of waiting forever for a writer
// (see vfs.OpenRegular).
func Open(path string) (*os.File, error) { return vfs.OpenRegular(path) }

// ReadFile reads a whole source file, which must be a regular file (see
// Open).
func ReadFile(path string) ([]byte, error) { return vfs.ReadRegular(path) }

// IsFile reports whether p is a regular file (following symbolic links).
func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// OpenTracked is Open for a session's data: when progress is not nil,
// every read of the returned file reports the bytes read so far and the
// file's size (as it was when opened).
func OpenTracked(path string, progress func(path string, done, total int64)) (io.ReadCloser, error) {
	f, err := Open(path)
	if err != nil || progress == nil {
		return f, err
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
func ReadFileTracked(path string, progress func(path string, done, total int64)) ([]byte, error) {
	if progress == nil {
		return ReadFile(path)
	}
	f, err := OpenTracked(path, progress)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

type tracked struct {
	f        *os.File
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
