//go:build !unix && !windows

package vfs

import (
	"os"
)

// NoFollow is the open flag that refuses a symlink in the last path
// element; this system has none, so writers rely on their Lstat checks.
const NoFollow = 0

// openRegular opens name read-only with flag and refuses anything but a
// regular file. This system has no O_NONBLOCK for files.
func openRegular(name string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return nil, err
	}
	return keepRegular(f, name)
}
