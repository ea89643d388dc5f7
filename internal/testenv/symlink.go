package testenv

import (
	"io/fs"
	"os"
)

// Symlink makes newname a symbolic link to oldname and reports whether
// the filesystem now holds one: false when os.Symlink fails (Windows
// without the right to make links) and when it reports success but no
// link is there (wine's CreateSymbolicLink returns success and makes
// nothing).
func Symlink(oldname, newname string) bool {
	if os.Symlink(oldname, newname) != nil {
		return false
	}
	fi, err := os.Lstat(newname)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
