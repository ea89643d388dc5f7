package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sessctl/sessctl/layout"
)

// FileOptions configure File.
type FileOptions struct {
	// FS is the filesystem; nil means layout.OS().
	FS layout.FS
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
// path. Version 3 files are left alone. A version above 3 is refused with a
// *layout.VersionError and left untouched. A file without a valid header is
// refused with a *layout.CorruptError.
//
// The caller holds the session's writer lock.
func File(ctx context.Context, path string, opts FileOptions) (res FileResult, err error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = layout.OS()
	}
	res.Path = path
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return res, err
	}
	defer f.Close()

	var out writeTarget
	var tmp string
	var tf layout.File
	if !opts.DryRun {
		tmp = layout.TempName(path)
		tf, err = fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|layout.NoFollow, layout.FileMode)
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
	r, err := Stream(ctx, f, out)
	res.Result = r
	if err != nil {
		if errors.Is(err, ErrNoHeader) {
			return res, &layout.CorruptError{Path: path, Err: err}
		}
		return res, fmt.Errorf("migrate %s: %w", path, err)
	}
	if r.From > layout.CurrentVersion {
		return res, &layout.VersionError{Path: path, Found: r.From, Max: layout.CurrentVersion}
	}
	if !r.Migrated || opts.DryRun {
		if opts.DryRun && r.Migrated && !opts.NoBackup {
			res.Backup = BackupPath(path, r.From)
		}
		return res, nil
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
	if err = fsys.Rename(tmp, path); err != nil {
		return res, fmt.Errorf("replace %s: %w", path, err)
	}
	if err = fsys.SyncDir(filepath.Dir(path)); err != nil {
		return res, fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return res, nil
}

// linkBackup hard-links the original to its backup name, adding a counter
// when an older backup already has that name.
func linkBackup(fsys layout.FS, path string, v float64) (string, error) {
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
