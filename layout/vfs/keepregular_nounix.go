//go:build !unix

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// keepRegular returns f, opened as name, when it is a regular file, and
// otherwise closes it and returns the error OpenRegular documents (where
// the system's open cannot check the type itself).
func keepRegular(f *os.File, name string) (*os.File, error) {
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = ErrNotRegular
		if st.IsDir() {
			err = syscall.EISDIR
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}
