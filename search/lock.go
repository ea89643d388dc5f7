package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/sessctl/sessctl/layout/vfs"
)

// The index lock keeps a database file from being deleted while another
// process has it open (SQLite forbids it: the other process goes on in
// the deleted file, fails with "disk I/O error", or deletes the new
// file's WAL when it closes). A process holds index.lock shared while it
// has the databases open, which is for the update and query of one
// search; deleting or creating a database (a rebuild, a damaged or new
// database) needs it exclusive, so it waits until the searches under way
// are done, and searches that start meanwhile wait for it.
//
// The own engine (ownindex.go) holds index.lock the same way: shared
// for a search that finds its index current and only reads it, exclusive
// for whatever writes it (an update, a merge of segments, emptying an
// index it does not trust, removing a crashed writer's leftovers). Its
// files change only under the exclusive lock, and the textindex manifest
// and the state are each replaced whole (written aside, then renamed), so
// a reader never sees a manifest, segment set, docs table and state of
// different updates, nor a segment deleted under it.
//
// writer.lock gives the exclusive lock precedence: a process that wants
// index.lock exclusive holds writer.lock exclusive while it waits and
// while it has index.lock, and a process takes writer.lock shared, for a
// moment, before it takes index.lock shared. A stream of overlapping
// searches therefore cannot keep a rebuild waiting forever. No process
// waits for writer.lock while it holds index.lock.
const (
	lockName   = "index.lock"
	writerName = "writer.lock"
)

// lockPoll is how often a lock held by another process is tried again.
const lockPoll = 10 * time.Millisecond

// indexLock is a process's hold on an index directory.
type indexLock struct {
	fs           vfs.FS // where the lock files are looked at
	main, writer *flock.Flock
	held         bool // index.lock is held, shared or exclusive
}

// lockShared takes the index lock of dir shared, waiting (until ctx
// ends) while another process has it exclusive.
func lockShared(ctx context.Context, fsys vfs.FS, dir string) (*indexLock, error) {
	l := &indexLock{
		fs:     fsys,
		main:   flock.New(filepath.Join(dir, lockName), flock.SetPermissions(0o600)),
		writer: flock.New(filepath.Join(dir, writerName), flock.SetPermissions(0o600)),
	}
	if err := take(ctx, l.fs, l.writer, true); err != nil {
		return nil, err
	}
	err := take(ctx, l.fs, l.main, true)
	if uerr := l.writer.Unlock(); err == nil && uerr != nil {
		err = fmt.Errorf("unlock %s: %w", l.writer.Path(), uerr)
	}
	if err != nil {
		l.main.Unlock()
		return nil, err
	}
	l.held = true
	return l, nil
}

// exclusive turns the shared hold into an exclusive one, waiting (until
// ctx ends) for the other processes to finish with the index. The
// caller has closed its databases: it must not hold any while it waits.
// On an error the lock is held neither way.
func (l *indexLock) exclusive(ctx context.Context) error {
	l.held = false
	if err := l.main.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", l.main.Path(), err)
	}
	if err := take(ctx, l.fs, l.writer, false); err != nil {
		return err
	}
	if err := take(ctx, l.fs, l.main, false); err != nil {
		l.writer.Unlock()
		return err
	}
	l.held = true
	return nil
}

// shared turns an exclusive hold back into a shared one. No other
// process can take the lock in between: they wait for writer.lock first.
func (l *indexLock) shared(ctx context.Context) error {
	l.held = false
	err := l.main.Unlock()
	if err == nil {
		err = take(ctx, l.fs, l.main, true)
	}
	l.held = err == nil
	if uerr := l.writer.Unlock(); err == nil && uerr != nil {
		err = fmt.Errorf("unlock %s: %w", l.writer.Path(), uerr)
	}
	return err
}

// release gives the lock up.
func (l *indexLock) release() error {
	l.held = false
	err := l.main.Unlock()
	if uerr := l.writer.Unlock(); err == nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.main.Path(), err)
	}
	return nil
}

// take locks f shared or exclusive, trying again every lockPoll until
// ctx ends. A lock file deleted or replaced meanwhile (the index
// directory removed by hand) is locked again by its new name. The
// kernel lock is gofrs/flock's, on the real file; the file at the path
// is looked at through fsys.
func take(ctx context.Context, fsys vfs.FS, f *flock.Flock, shared bool) error {
	for {
		var ok bool
		var err error
		if shared {
			ok, err = f.TryRLockContext(ctx, lockPoll)
		} else {
			ok, err = f.TryLockContext(ctx, lockPoll)
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("wait for the search index lock %s: %w", f.Path(), ctx.Err())
			}
			return fmt.Errorf("lock %s: %w", f.Path(), err)
		}
		if !ok {
			return fmt.Errorf("lock %s: not taken", f.Path())
		}
		held, herr := f.Stat()
		now, nerr := fsys.Stat(f.Path())
		if herr == nil && nerr == nil && vfs.SameFile(held, now) {
			return nil
		}
		f.Unlock()
		if nerr != nil && !errors.Is(nerr, fs.ErrNotExist) {
			return fmt.Errorf("lock %s: %w", f.Path(), nerr)
		}
		if herr != nil {
			return fmt.Errorf("lock %s: %w", f.Path(), herr)
		}
	}
}
