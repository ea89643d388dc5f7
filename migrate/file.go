package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// FileOptions configure File.
type FileOptions struct {
	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
	// DryRun computes the result without writing anything.
	DryRun bool
	// NoBackup skips keeping the original as <file>.v<N>.bak.
	NoBackup bool
}

// FileResult is what File did to one file.
type FileResult struct {
	Result
	Path   string
	Backup string // the backup's path, when one was kept
}

// BackupPath returns the name the original of a version v file is kept
// under: <file>.v<N>.bak.
func BackupPath(path string, v float64) string {
	return path + ".v" + strconv.FormatFloat(v, 'f', -1, 64) + ".bak"
}

// File migrates the session file at path to version 3 in place: it streams
// the migrated lines into a temporary file beside it, syncs it, keeps the
// original as <file>.v<N>.bak (a hard link, so byte for byte the same file),
// renames the temporary file over the original and syncs the directory. A
// crash at any point leaves either the original or the complete new file at
// path. The new file keeps the original's mode, owner and group.
//
// The header is read first, and nothing more is done unless the file
// needs migrating: version 3 files are left alone, a version above 3 is
// refused with a *engine.VersionError, a file without a valid header with
// a *engine.CorruptError. A file that needs migrating but may not be
// rewritten (see vfs.CheckReplace: read-only, not writable by the
// caller, a link or special file) is refused before anything is written;
// a dry run reports the same refusal.
//
// The caller holds the session's writer lock.
func File(ctx context.Context, path string, opts FileOptions) (res FileResult, err error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	res.Path = path
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return res, err
	}
	defer f.Close()
	v, err := fileVersion(ctx, path, f)
	res.From, res.To = v, int(v)
	if err != nil || !Needed(v) {
		return res, err
	}
	orig, err := vfs.CheckReplace(fsys, path)
	if err != nil {
		return res, err
	}

	var out writeTarget
	var tmp string
	var tf vfs.File
	if !opts.DryRun {
		tmp = vfs.TempName(path)
		tf, err = fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
		if err != nil {
			return res, fmt.Errorf("create temporary file for %s: %w", path, err)
		}
		defer func() {
			if tf != nil {
				_ = tf.Close()
			}
			if err != nil || !res.Migrated {
				_ = fsys.Remove(tmp)
			}
		}()
		out = tf
	} else {
		out = discard{}
	}
	r, err := Stream(ctx, io.NewSectionReader(f, 0, math.MaxInt64), out)
	res.Result = r
	if err != nil {
		if errors.Is(err, ErrNoHeader) {
			return res, &errs.CorruptError{Path: path, Err: err}
		}
		return res, fmt.Errorf("migrate %s: %w", path, err)
	}
	if r.From > jsonl.CurrentVersion {
		return res, &errs.VersionError{Path: path, Found: r.From, Max: jsonl.CurrentVersion}
	}
	if !r.Migrated || opts.DryRun {
		if opts.DryRun && r.Migrated && !opts.NoBackup {
			res.Backup = BackupPath(path, r.From)
		}
		return res, nil
	}
	if err = vfs.KeepAttrs(tf, path, orig); err != nil {
		return res, err
	}
	if err = tf.Sync(); err != nil {
		return res, fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err = tf.Close(); err != nil {
		tf = nil
		return res, fmt.Errorf("close %s: %w", tmp, err)
	}
	tf = nil
	if !opts.NoBackup {
		bak, lerr := linkBackup(fsys, path, r.From)
		if lerr != nil {
			err = lerr
			return res, err
		}
		res.Backup = bak
	}
	// Closed before the rename: Windows without POSIX renames replaces
	// no file that is open, even by this process.
	_ = f.Close()
	if err = fsys.Rename(tmp, path); err != nil {
		return res, fmt.Errorf("replace %s: %w", path, err)
	}
	if err = fsys.SyncDir(filepath.Dir(path)); err != nil {
		return res, fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return res, nil
}

// FileVersion returns the version of the session file at path from its
// header, reading nothing after it: a *engine.CorruptError when it has no
// valid header, a *engine.VersionError when the version is newer than
// this code knows. It takes no lock and writes nothing.
func FileVersion(ctx context.Context, fsys vfs.FS, path string) (float64, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return fileVersion(ctx, path, f)
}

func fileVersion(ctx context.Context, path string, f vfs.File) (float64, error) {
	v, err := Version(ctx, io.NewSectionReader(f, 0, math.MaxInt64))
	switch {
	case errors.Is(err, ErrNoHeader):
		return v, &errs.CorruptError{Path: path, Err: err}
	case err != nil:
		return v, fmt.Errorf("read header of %s: %w", path, err)
	case v > jsonl.CurrentVersion:
		return v, &errs.VersionError{Path: path, Found: v, Max: jsonl.CurrentVersion}
	}
	return v, nil
}

// linkBackup hard-links the original to its backup name, adding a counter
// when an older backup already has that name.
func linkBackup(fsys vfs.FS, path string, v float64) (string, error) {
	base := BackupPath(path, v)
	name := base
	for i := 1; ; i++ {
		err := fsys.Link(path, name)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", fmt.Errorf("keep backup of %s: %w", path, err)
		}
		name = base + "." + strconv.Itoa(i)
	}
}

type writeTarget interface{ Write([]byte) (int, error) }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
