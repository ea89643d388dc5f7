package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// MigrateOptions configure Store.Migrate.
type MigrateOptions struct {
	// DryRun reports what would happen and writes nothing (no lock is
	// taken either).
	DryRun bool
	// NoBackup skips keeping the original as <file>.v<N>.bak.
	NoBackup bool
	// Wait waits for a session held by another writer until ctx is done,
	// or for at most WaitFor when it is above zero. WaitFor bounds only
	// the wait for the lock, not the migration, and starts only when the
	// session is found held.
	Wait    bool
	WaitFor time.Duration
}

// migrateFile is Store.Migrate of the file at path with the store's
// options opts.
func migrateFile(ctx context.Context, path string, o MigrateOptions, opts options) (migrate.FileResult, error) {
	res := migrate.FileResult{Path: path}
	fsys := opts.FS
	v, err := migrate.FileVersion(ctx, fsys, path)
	res.From, res.To = v, int(v)
	if err != nil || !migrate.Needed(v) {
		return res, err
	}
	if o.DryRun {
		return migrate.File(ctx, path, migrate.FileOptions{FS: fsys, DryRun: true, NoBackup: o.NoBackup})
	}
	if _, err := vfs.CheckReplace(opts.fs(), path); err != nil {
		return res, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return res, fmt.Errorf("migrate %s: %w", path, err)
	}
	opts.LockMode, opts.Wait = "migrate", false
	lk, err := acquire(ctx, path, opts)
	if errors.Is(err, ErrLocked) && o.Wait {
		held := err
		wctx, cancel := ctx, func() {}
		if o.WaitFor > 0 {
			wctx, cancel = context.WithTimeout(ctx, o.WaitFor)
		}
		opts.Wait = true
		lk, err = acquire(wctx, path, opts)
		if err != nil && !errors.Is(err, ErrLocked) && wctx.Err() != nil {
			// The wait ended before another try: still held.
			err = fmt.Errorf("%w: gave up waiting: %w", held, wctx.Err())
		}
		cancel()
	}
	if err != nil {
		return res, err
	}
	defer lk.Close()
	// What an interrupted migration (or other write) of this session left
	// is stale now that the lock is held.
	if temps, err := sessionfile.TempFiles(opts.fs(), abs); err == nil {
		for _, tmp := range temps {
			_ = opts.fs().Remove(tmp)
		}
	}
	return migrate.File(ctx, path, migrate.FileOptions{FS: fsys, NoBackup: o.NoBackup})
}
