package sessionfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
)

// WriteResult says what WriteWhole did.
type WriteResult int

// The outcomes of WriteWhole.
const (
	WriteUnchanged WriteResult = iota // the file already held exactly these bytes
	WriteCreated                      // the file did not exist
	WriteReplaced                     // the file existed with other bytes
)

// String returns "unchanged", "created" or "replaced".
func (r WriteResult) String() string {
	switch r {
	case WriteCreated:
		return "created"
	case WriteReplaced:
		return "replaced"
	}
	return "unchanged"
}

// WriteOptions configure WriteWhole.
type WriteOptions struct {
	// Lock is how the session's writer lock is taken (its FS is the
	// filesystem written to).
	Lock LockOptions
	// NoLock skips the writer lock, for a caller that holds it.
	NoLock bool
}

// WriteWhole makes data the complete content of the session file at path,
// as importers and replication need: it takes the session's writer lock
// (unless o.NoLock), and then leaves the file alone when it already holds
// exactly data, creates it when it is missing, or replaces it atomically
// (temporary file, sync, rename, directory sync) when check, called with
// the current bytes, allows it. A check error is returned as it is and
// nothing is written. Missing directories are created 0700, the file
// 0600; a symbolic link at path is refused.
func WriteWhole(ctx context.Context, path string, data []byte, check func(current []byte) error, o WriteOptions) (res WriteResult, err error) {
	fsys := o.Lock.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return res, fmt.Errorf("write session %s: %w", path, err)
	}
	if err := vfs.MkdirAllSync(fsys, filepath.Dir(abs), vfs.DirMode); err != nil {
		return res, fmt.Errorf("write session %s: %w", abs, err)
	}
	if !o.NoLock {
		lk, err := Acquire(ctx, abs, o.Lock)
		if err != nil {
			return res, fmt.Errorf("open session %s for writing: %w", abs, err)
		}
		defer func() {
			if rerr := lk.Close(); err == nil && rerr != nil {
				err = fmt.Errorf("release lock of %s: %w", abs, rerr)
			}
		}()
	}
	if fi, err := fsys.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return res, fmt.Errorf("write session %s: %w", abs, vfs.ErrSymlink)
	}
	current, err := fsys.ReadFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res = WriteCreated
	case err != nil:
		return res, fmt.Errorf("read session %s: %w", abs, err)
	case bytes.Equal(current, data):
		return WriteUnchanged, nil
	default:
		if check != nil {
			if err := check(current); err != nil {
				return res, err
			}
		}
		res = WriteReplaced
	}
	if err := vfs.WriteFileAtomic(fsys, abs, data, vfs.FileMode); err != nil {
		return res, err
	}
	return res, nil
}
