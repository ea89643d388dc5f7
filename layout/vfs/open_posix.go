//go:build !windows

package vfs

import (
	"io/fs"
	"os"
)

// openFile is the real filesystem's open for writing.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// renameInUse reports whether err, from a rename over a file, means that
// another process holds the file open; only Windows refuses that.
func renameInUse(error) bool { return false }

// rename is os.Rename: an atomic replace on POSIX.
func rename(oldname, newname string) error { return os.Rename(oldname, newname) }
