package lock

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sessctl/sessctl/layout/vfs"
)

// tryExcl makes one attempt in fallback mode: create path+".excl" with
// O_EXCL and write the owner record into it. When the file exists, its
// record decides: a live, foreign, unreadable or empty record means held; a
// stale one on this host and boot is taken over and errRetry asks for
// another attempt.
func tryExcl(path string, me self, opts Options) (*Lock, *LockedError, error) {
	excl := exclPath(path)
	o := newOwner(me, opts)
	data, err := encodeOwner(o)
	if err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", excl, err)
	}
	f, err := opts.FS.OpenFile(excl, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err == nil {
		return createdExcl(f, path, me, opts, o, data)
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, nil, fmt.Errorf("lock %s: %w", excl, err)
	}
	rec, rerr := readRecord(opts.FS, excl)
	switch {
	case errors.Is(rerr, fs.ErrNotExist):
		return nil, nil, errRetry // released in the meantime
	case errors.Is(rerr, errSymlink):
		return nil, nil, fmt.Errorf("lock %s: fallback lock file %w, refusing to follow it", excl, errSymlink)
	}
	le := &LockedError{Path: excl, Owner: rec.Owner, Reason: rec.Reason, Now: opts.Now()}
	v, reason := judge(rec.Owner, me)
	switch v {
	case stale:
		if err := takeOver(opts.FS, excl, rec.Data); err != nil {
			return nil, nil, fmt.Errorf("lock %s: take over stale lock (%s): %w", excl, reason, err)
		}
		return nil, nil, errRetry
	case selfHeld:
		le.Self = true
	case otherHost:
		le.Reason = reason
	case otherBoot:
		le.Reason = reason + "; not taken over automatically"
	}
	return nil, le, nil
}

// createdExcl finishes a fallback lock after the O_EXCL create succeeded:
// write and sync the record, then make sure no process holds the flock on
// path (a writer that is not in fallback mode).
func createdExcl(f vfs.File, path string, me self, opts Options, o Owner, data []byte) (*Lock, *LockedError, error) {
	excl := f.Name()
	_, err := f.Write(data)
	if err == nil {
		err = vfs.OwnLike(f, opts.Like)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = opts.FS.SyncDir(filepath.Dir(excl))
	}
	if err != nil {
		opts.FS.Remove(excl)
		return nil, nil, fmt.Errorf("lock %s: write owner record: %w", excl, err)
	}
	held, err := probeFlock(path)
	if err != nil && !isNoLock(err) {
		removeIfOurs(opts.FS, excl, data)
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if held {
		removeIfOurs(opts.FS, excl, data)
		return nil, heldError(path, me, opts), nil
	}
	return &Lock{path: path, held: excl, owner: o, record: data, fs: opts.FS}, nil, nil
}

// takeOver moves a stale fallback file out of the way. It renames it to a
// unique ".stale-*" name, then re-reads it to confirm that it still is the
// record that was judged stale (judged holds its bytes); only then is it
// removed. If another process replaced the file in between, the moved file
// is linked back into place (never over a newer file) and the caller simply
// tries again.
func takeOver(fsys vfs.FS, excl string, judged []byte) error {
	moved := excl + ".stale-" + strconv.Itoa(os.Getpid()) + "-" + randomSuffix()
	if err := fsys.Rename(excl, moved); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // someone else took it over first
		}
		return err
	}
	got, err := readNoFollow(fsys, moved)
	if err == nil && bytes.Equal(got, judged) {
		return fsys.Remove(moved)
	}
	// Not the record that was judged: put it back, unless a new lock file
	// has appeared in the meantime.
	if lerr := fsys.Link(moved, excl); lerr != nil {
		return fmt.Errorf("the lock file changed while it was being taken over; it was moved to %s and could not be put back: %w", moved, lerr)
	}
	return fsys.Remove(moved)
}
