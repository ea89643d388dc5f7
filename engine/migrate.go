package engine

import (
	"context"
	"path/filepath"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
)

// MigrateOptions configure MigrateFile.
type MigrateOptions struct {
	// DryRun reports what would happen and writes nothing (no lock is
	// taken either).
	DryRun bool
	// NoBackup skips keeping the original as <file>.v<N>.bak.
	NoBackup bool
	// Wait, LockMode and Command are as in Options.
	Wait    bool
	Command string
	// FS is the filesystem; nil means layout.OS().
	FS layout.FS
}

// MigrateFile upgrades one version 1 or 2 session file to version 3 in
// place, streaming it (memory is bounded by its longest line), under the
// session's writer lock: see migrate.File for the atomic replacement and
// the backup. Temporary files an interrupted earlier run left (see
// TempFiles) are removed first. Version 3 files are left alone; newer versions are refused
// with a *VersionError; a file without a valid header is refused with a
// *CorruptError. Both leave the file untouched.
func MigrateFile(ctx context.Context, path string, o MigrateOptions) (migrate.FileResult, error) {
	opts := Options{FS: o.FS, Wait: o.Wait, Command: o.Command, LockMode: "migrate"}
	if !o.DryRun {
		rel, err := acquireLock(ctx, path, opts)
		if err != nil {
			return migrate.FileResult{Path: path}, err
		}
		defer rel()
		// What an interrupted migration (or other write) of this
		// session left is stale now that the lock is held.
		if abs, err := filepath.Abs(path); err == nil {
			if temps, err := tempFiles(opts.fs(), abs); err == nil {
				for _, tmp := range temps {
					_ = opts.fs().Remove(tmp)
				}
			}
		}
	}
	return migrate.File(ctx, path, migrate.FileOptions{FS: o.FS, DryRun: o.DryRun, NoBackup: o.NoBackup})
}
