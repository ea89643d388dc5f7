package engine

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// ErrLocked is lock.ErrLocked: another writer holds the session. The error
// is a *LockedError naming the holder.
var ErrLocked = lock.ErrLocked

// LockedError is lock.LockedError.
type LockedError = lock.LockedError

// LockPath returns the writer lock file of a session file: <file>.lock.
// It is never renamed, and deleted only by a holder of the lock: by Trash,
// and by a session whose file was never written when it closes.
func LockPath(sessionFile string) string { return sessionFile + ".lock" }

// acquireLock takes the writer lock of a session file and returns its
// release function.
func acquireLock(ctx context.Context, file string, opts Options) (func() error, error) {
	l, err := acquire(ctx, file, opts)
	if err != nil {
		return nil, err
	}
	return l.Close, nil
}

// acquire takes the writer lock of a session file.
func acquire(ctx context.Context, file string, opts Options) (*lock.Lock, error) {
	l, err := lock.Acquire(ctx, LockPath(file), lock.Options{
		Mode:    opts.LockMode,
		Command: opts.Command,
		Wait:    opts.Wait,
		Like:    ownerRef(opts.fs(), file),
	})
	if err != nil {
		return nil, fmt.Errorf("open session %s for writing: %w", file, err)
	}
	return l, nil
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
