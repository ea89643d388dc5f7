package sessionfile

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// LockOptions say how Acquire takes a session's writer lock.
type LockOptions struct {
	// Mode and Command are recorded in the lock's owner record (see
	// lock.Options).
	Mode    string
	Command string
	// Wait waits for the lock until the context is done, instead of
	// failing at once with lock.ErrLocked.
	Wait bool
	// FS is the filesystem the session file is looked up in, for the
	// owner the lock files get; nil means vfs.OS().
	FS vfs.FS
}

// Acquire takes the writer lock of the session file at file (absolute).
// Run as root, the lock files are owned like the session file, or before
// it exists like the nearest directory above it.
func Acquire(ctx context.Context, file string, o LockOptions) (*lock.Lock, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	return lock.Acquire(ctx, LockPath(file), lock.Options{
		Mode:    o.Mode,
		Command: o.Command,
		Wait:    o.Wait,
		Like:    ownerRef(fsys, file),
	})
}

// ownerRef is the file whose owner and group the files sessctl makes for
// the session at file get when it runs as root (vfs.OwnLike): the session
// file, or before it exists the nearest directory above it that does.
func ownerRef(fsys vfs.FS, file string) fs.FileInfo {
	if st, err := fsys.Lstat(file); err == nil && st.Mode().IsRegular() {
		return st
	}
	for d := filepath.Dir(file); ; d = filepath.Dir(d) {
		if st, err := fsys.Stat(d); err == nil {
			return st
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
