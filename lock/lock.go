package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Options configure Acquire. The zero value takes the lock for writing,
// fails at once when it is held, and uses flock(2).
type Options struct {
	Mode          string           // recorded in the owner record; "" means "write"
	Command       string           // recorded in the owner record; "" means filepath.Base(os.Args[0])
	Wait          bool             // false: try once and fail with ErrLocked at once; true: retry until ctx is done (even when this process is the holder)
	RetryInterval time.Duration    // how often a waiting Acquire retries; 0 means 50ms
	Now           func() time.Time // clock for Owner.Since and LockedError.Now; nil means time.Now
	NoFlock       bool             // force the exclusive-create fallback (for file systems known to lack flock)
	// Like is the file (the session file, or the directory a new
	// session goes in) whose owner and group the lock's files get when
	// this process runs as root (see vfs.OwnLike): the lock file, the
	// owner record and the fallback file. nil means the directory of the
	// lock file. New directories get the owner of the one they are made
	// in. A lock file left owned by root is given back when root takes
	// the lock.
	Like fs.FileInfo
	// FS is the filesystem the lock's files are made, looked at, read,
	// written and removed through; nil means vfs.OS(). The kernel lock
	// itself (flock(2), gofrs/flock) is taken on the real file at the
	// path, so FS must be the real filesystem or a wrapper of it
	// (vfstest.FaultFS).
	FS vfs.FS
}

const defaultRetryInterval = 50 * time.Millisecond

// maxRetries bounds how often in a row Acquire starts over at once because
// the lock file was replaced under it, or a fallback file was taken over or
// vanished between the create and the read.
const maxRetries = 10

func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = "write"
	}
	if o.Command == "" {
		o.Command = filepath.Base(os.Args[0])
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = defaultRetryInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	return o
}

// Lock is a held lock. Release it with Close. A Lock is safe for use by
// several goroutines.
type Lock struct {
	path   string
	held   string       // the file that is held: path, or its ".excl" file in fallback mode
	owner  Owner        // the record written for this lock
	record []byte       // its bytes as written, to recognise it on Close
	fl     *flock.Flock // nil in fallback mode
	fs     vfs.FS       // Options.FS

	mu     sync.Mutex
	closed bool
}

// errRetry and errNoFlock steer Acquire's loop; they never reach callers.
var (
	errRetry   = errors.New("start over")
	errNoFlock = errors.New("file system does not support flock")
)

// Acquire takes the exclusive lock on the lock file at path, creating the
// file (0600) and its directory (0700) if needed, and records this process
// as its owner in OwnerPath(path).
//
// When another holder owns the lock, Acquire returns a *LockedError at once,
// or, with opts.Wait, retries every opts.RetryInterval until ctx is done and
// then returns an error that matches both ErrLocked (and unwraps to the
// *LockedError) and ctx.Err().
//
// When the file system reports that it cannot lock (ENOLCK, EOPNOTSUPP), or
// opts.NoFlock is set, Acquire uses the exclusive-create fallback described
// in the package documentation.
func Acquire(ctx context.Context, path string, opts Options) (*Lock, error) {
	opts = opts.withDefaults()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := vfs.MkdirAllSync(opts.FS, filepath.Dir(path), vfs.DirMode); err != nil {
		return nil, fmt.Errorf("lock %s: create directory: %w", path, err)
	}
	if opts.Like == nil {
		if d, err := opts.FS.Stat(filepath.Dir(path)); err == nil {
			opts.Like = d
		}
	}
	me := currentSelf()
	fallback := opts.NoFlock
	retries := 0
	for {
		var (
			l   *Lock
			le  *LockedError
			err error
		)
		if fallback {
			l, le, err = tryExcl(path, me, opts)
		} else {
			l, le, err = tryFlock(path, me, opts)
		}
		switch {
		case errors.Is(err, errNoFlock):
			fallback = true
			continue
		case errors.Is(err, errRetry):
			retries++
			if retries >= maxRetries {
				return nil, fmt.Errorf("lock %s: gave up after %d attempts: the lock file keeps being replaced or taken over", path, retries)
			}
			continue
		case err != nil:
			return nil, err
		case l != nil:
			return l, nil
		}
		if !opts.Wait {
			return nil, le
		}
		retries = 0 // the bound is on immediate retries in a row
		t := time.NewTimer(opts.RetryInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: gave up waiting: %w", le, ctx.Err())
		case <-t.C:
		}
	}
}

// tryFlock makes one attempt with flock(2). It returns the Lock, or the
// *LockedError describing the holder, or an error; errNoFlock asks for the
// fallback and errRetry for another attempt.
func tryFlock(path string, me self, opts Options) (*Lock, *LockedError, error) {
	fl := flock.New(path,
		flock.SetFlag(os.O_CREATE|os.O_RDWR|oNoFollow),
		flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		if isNoLock(err) {
			return nil, nil, errNoFlock
		}
		if isSymlink(opts.FS, path) {
			return nil, nil, fmt.Errorf("lock %s: lock path %w, refusing to follow it", path, errSymlink)
		}
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, heldError(path, me, opts), nil
	}
	if err := checkIdentity(opts.FS, fl, path); err != nil {
		fl.Unlock()
		return nil, nil, err
	}
	if err := vfs.ChownLike(opts.FS, path, opts.Like); err != nil {
		fl.Unlock()
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// A process in fallback mode (NoFlock) holds the ".excl" file instead.
	if le := exclHolder(path, me, opts); le != nil {
		fl.Unlock()
		return nil, le, nil
	}
	o := newOwner(me, opts)
	data, err := encodeOwner(o)
	if err == nil {
		err = writeOwnerFile(opts.FS, OwnerPath(path), data, opts.Like)
	}
	if err != nil {
		fl.Unlock()
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{path: path, held: path, owner: o, record: data, fl: fl, fs: opts.FS}, nil, nil
}

// checkIdentity makes sure the locked descriptor still is the file at path:
// same device and inode and at least one link. Otherwise someone removed or
// replaced the lock file after it was opened, and the lock protects nothing;
// errRetry asks for another attempt. The locked descriptor is
// gofrs/flock's; the path is looked at through fsys.
func checkIdentity(fsys vfs.FS, fl *flock.Flock, path string) error {
	fi, err := fl.Stat()
	if err != nil {
		return fmt.Errorf("lock %s: stat locked file: %w", path, err)
	}
	li, err := fsys.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errRetry
	case err != nil:
		return fmt.Errorf("lock %s: %w", path, err)
	case li.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("lock %s: lock path %w, refusing to follow it", path, errSymlink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("lock %s: lock file is not a regular file (%s)", path, fi.Mode().Type())
	case !vfs.SameFile(fi, li) || linkCount(fi) < 1:
		return errRetry
	}
	return nil
}

// heldError describes the holder of a flock from the owner record.
func heldError(path string, me self, opts Options) *LockedError {
	rec, _ := readRecord(opts.FS, OwnerPath(path))
	le := &LockedError{Path: path, Owner: rec.Owner, Reason: rec.Reason, Now: opts.Now()}
	v, reason := judge(rec.Owner, me)
	switch v {
	case selfHeld:
		le.Self = true
	case stale, otherBoot:
		le.Stale, le.Reason = true, reason
	case otherHost:
		le.Reason = reason
	}
	return le
}

// exclHolder reports a live holder of the fallback file beside path, if
// there is one. A stale fallback file is left for a fallback acquirer to
// take over; a symbolic link there is not a fallback lock and is ignored.
func exclHolder(path string, me self, opts Options) *LockedError {
	excl := exclPath(path)
	rec, err := readRecord(opts.FS, excl)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errSymlink) {
		return nil
	}
	v, reason := judge(rec.Owner, me)
	if v == stale {
		return nil
	}
	le := &LockedError{Path: excl, Owner: rec.Owner, Reason: rec.Reason, Now: opts.Now()}
	switch v {
	case selfHeld:
		le.Self = true
	case otherHost, otherBoot:
		le.Reason = reason
	}
	return le
}

// probeFlock reports whether some process holds the flock on path, without
// creating the file. A lock it gets is released at once.
func probeFlock(path string) (held bool, err error) {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY|oNoFollow|oNonBlock))
	ok, err := fl.TryLock()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if isSymlink(vfs.OS(), path) {
			return false, fmt.Errorf("lock path %w", errSymlink)
		}
		return false, err
	}
	if !ok {
		return true, nil
	}
	return false, fl.Unlock()
}

// Close releases the lock. It removes the owner record if it is still the
// one this Lock wrote, and in fallback mode the ".excl" file on the same
// condition; it never removes the flock lock file. Close is idempotent.
func (l *Lock) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.fl == nil {
		ours, err := removeIfOurs(l.fs, l.held, l.record)
		if err != nil {
			return fmt.Errorf("unlock %s: %w", l.held, err)
		}
		if !ours {
			return fmt.Errorf("unlock %s: the fallback lock file no longer holds this process's record; left in place", l.held)
		}
		return nil
	}
	// The record goes first, while the lock still keeps other writers from
	// writing theirs.
	_, rerr := removeIfOurs(l.fs, OwnerPath(l.path), l.record)
	if rerr != nil {
		rerr = fmt.Errorf("remove owner record: %w", rerr)
	}
	uerr := l.fl.Unlock()
	if err := errors.Join(rerr, uerr); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

// Remove releases the lock like Close and, while still holding it, deletes
// the lock file, for a holder that is done with what the lock guards: a
// session that was deleted, or never written. Removing a held lock file is
// safe: a process that opened the old file and takes its lock afterwards
// finds the path gone or replaced and starts over (see Acquire). Only the
// holder may remove a lock file; that is why there is no function that
// removes one by path.
//
// On Windows, which deletes no file open without delete sharing, the lock
// file is removed just after it is released and closed instead; a
// process that opened it in between holds it open without delete sharing
// (gofrs/flock's open), so the removal then fails and the file stays.
//
// removed reports whether the lock file is gone. It stays, without an
// error, when it is no longer the file this Lock holds, or when another
// process has it open (Windows); in fallback mode only the
// ".excl" file is removed, as by Close. err reports a failure to release.
// Remove is idempotent, and does nothing after Close.
func (l *Lock) Remove() (removed bool, err error) {
	l.mu.Lock()
	if l.closed || l.fl == nil {
		l.mu.Unlock()
		return false, l.Close()
	}
	l.closed = true
	defer l.mu.Unlock()
	_, rerr := removeIfOurs(l.fs, OwnerPath(l.path), l.record)
	if rerr != nil {
		rerr = fmt.Errorf("remove owner record: %w", rerr)
	}
	ours := false
	if fi, err := l.fl.Stat(); err == nil {
		if li, err := l.fs.Lstat(l.path); err == nil && li.Mode().IsRegular() && vfs.SameFile(fi, li) {
			ours = true
			if runtime.GOOS != "windows" {
				removed = l.fs.Remove(l.path) == nil
			}
		}
	}
	uerr := l.fl.Unlock()
	if ours && runtime.GOOS == "windows" {
		// Windows deletes no file that is open without delete sharing,
		// as the lock file is while locked: remove it once unlocked and
		// closed. A process that opened it meanwhile holds it without
		// delete sharing too, so the remove then fails and its lock
		// file stays.
		removed = l.fs.Remove(l.path) == nil
	}
	if err := errors.Join(rerr, uerr); err != nil {
		return removed, fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return removed, nil
}

// removeIfOurs removes the file at path if it holds exactly data. A missing
// file counts as ours (nothing left to remove).
func removeIfOurs(fsys vfs.FS, path string, data []byte) (ours bool, err error) {
	got, err := readNoFollow(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !bytes.Equal(got, data) {
		return false, nil
	}
	if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, err
	}
	return true, nil
}

// Path returns the lock file path given to Acquire, in either mode.
func (l *Lock) Path() string { return l.path }

// Owner returns the owner record written for this lock.
func (l *Lock) Owner() Owner { return l.owner }
