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
// Another process may append to the file meanwhile (pi takes no lock):
// just before the rename, the file must still be the one read, holding
// exactly the bytes streamed. Otherwise nothing is replaced and the file
// is migrated again, up to fileAttempts times in all, after which the
// error wraps ErrChanged.
//
// The caller holds the session's writer lock.
func File(ctx context.Context, path string, opts FileOptions) (FileResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := fileOnce(ctx, path, opts)
		if !errors.Is(err, ErrChanged) || attempt == fileAttempts {
			return res, err
		}
	}
}

// fileAttempts is how many times File migrates a file that keeps
// changing under it before it gives up.
const fileAttempts = 3

// fileOnce is one attempt of File.
func fileOnce(ctx context.Context, path string, opts FileOptions) (res FileResult, err error) {
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

	src := &countingReader{r: io.NewSectionReader(f, 0, math.MaxInt64)}
	if opts.DryRun {
		r, err := Stream(ctx, src, discard{})
		res.Result = r
		if err = streamErr(path, r, err); err == nil && r.Migrated && !opts.NoBackup {
			res.Backup = BackupPath(path, r.From)
		}
		return res, err
	}
	rw := rewrite{fsys: fsys, path: path, orig: orig, from: v, noBackup: opts.NoBackup}
	rw.ready = func() error {
		// Closed before the rename: Windows without POSIX renames
		// replaces no file that is open, even by this process.
		if err := f.Close(); err != nil {
			return err
		}
		// Stream read to the end: a file that grew since (a line
		// appended, or the rest of one it found torn) or was replaced
		// holds bytes the new version lacks.
		st, err := fsys.Lstat(path)
		if err != nil {
			return fmt.Errorf("migrate %s: %w: %w", path, ErrChanged, err)
		}
		if !vfs.SameFile(st, orig) || st.Size() != src.n {
			return fmt.Errorf("migrate %s: %w", path, ErrChanged)
		}
		return nil
	}
	res.Backup, err = rw.run(func(w io.Writer) (bool, error) {
		r, err := Stream(ctx, src, w)
		res.Result = r
		return r.Migrated, streamErr(path, r, err)
	})
	return res, err
}

// streamErr is the error File reports for what Stream returned.
func streamErr(path string, r Result, err error) error {
	switch {
	case errors.Is(err, ErrNoHeader):
		return &errs.CorruptError{Path: path, Err: err}
	case err != nil:
		return fmt.Errorf("migrate %s: %w", path, err)
	case r.From > jsonl.CurrentVersion:
		return &errs.VersionError{Path: path, Found: r.From, Max: jsonl.CurrentVersion}
	}
	return nil
}

// ErrChanged is wrapped by WriteFile, and by File after its last
// attempt, when the file is no longer the one whose lines were migrated:
// another process (pi takes no lock) wrote to it or replaced it. Nothing
// was replaced; migrate it again.
var ErrChanged = errors.New("the file changed since it was read")

// WriteOptions configure WriteFile.
type WriteOptions struct {
	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
	// NoBackup skips keeping the original as <file>.v<N>.bak.
	NoBackup bool
	// Read is the Lstat of the file taken when its lines were read (after
	// reading them). Nothing is replaced unless path still names that
	// file with that size and modification time, which is checked first
	// and again just before the rename.
	Read fs.FileInfo
}

// WriteFile replaces the session file at path with m, the migration in
// memory (InMemory) of all its lines, with File's steps: a temporary file
// beside it (given the original's mode, owner and group) is written and
// synced, the original kept as <file>.v<N>.bak (a hard link), the
// temporary file renamed over the original and the directory synced. A
// crash at any point leaves either the original or the complete new file
// at path. The bytes are those File would write: the file is not read
// again.
//
// When the file is not the one opts.Read describes, at the start or just
// before the rename, nothing is replaced (the temporary file and the
// backup just made are removed) and the error wraps ErrChanged. A file
// that may not be rewritten is refused as by File. The caller holds the
// session's writer lock.
func WriteFile(ctx context.Context, path string, m *Memory, opts WriteOptions) (res FileResult, err error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	res.Path = path
	res.Result = m.Result
	if !m.Result.Migrated {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	orig, err := vfs.CheckReplace(fsys, path)
	if err != nil {
		return res, err
	}
	unchanged := func(st fs.FileInfo) error {
		if st == nil || opts.Read == nil || !vfs.SameFile(st, opts.Read) || st.Size() != opts.Read.Size() ||
			!st.ModTime().Equal(opts.Read.ModTime()) {
			return fmt.Errorf("migrate %s: %w", path, ErrChanged)
		}
		return nil
	}
	if err := unchanged(orig); err != nil {
		return res, err
	}
	rw := rewrite{fsys: fsys, path: path, orig: orig, from: m.Result.From, noBackup: opts.NoBackup}
	rw.ready = func() error {
		st, err := fsys.Lstat(path)
		if err != nil {
			return fmt.Errorf("migrate %s: %w: %w", path, ErrChanged, err)
		}
		return unchanged(st)
	}
	res.Backup, err = rw.run(func(w io.Writer) (bool, error) {
		for _, d := range m.Data {
			if _, err := w.Write(d); err != nil {
				return false, fmt.Errorf("migrate %s: write temporary file: %w", path, err)
			}
		}
		return true, nil
	})
	return res, err
}

// rewrite is the crash-safe replacement of a session file by a migrated
// version, shared by File and WriteFile.
type rewrite struct {
	fsys     vfs.FS
	path     string
	orig     fs.FileInfo // the original's Lstat, from vfs.CheckReplace
	from     float64     // its version, which names the backup
	noBackup bool
	// ready, when not nil, is called just before the rename; an error
	// cancels it, and the backup just made is removed.
	ready func() error
}

// run creates a temporary file beside the original and has fill write the
// new version into it; fill reporting false means there is nothing to
// replace. The temporary file gets the original's mode, owner and group
// and is synced, the original is linked to its backup name, ready is
// asked, the temporary file is renamed over the original and the
// directory synced. A failure before the rename removes the temporary
// file and leaves the original at path. It returns the backup's path.
func (rw rewrite) run(fill func(w io.Writer) (bool, error)) (backup string, err error) {
	fsys, path := rw.fsys, rw.path
	tmp := vfs.TempName(path)
	tf, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return "", fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	replaced := false
	defer func() {
		if tf != nil {
			_ = tf.Close()
		}
		if !replaced {
			_ = fsys.Remove(tmp)
		}
	}()
	ok, err := fill(tf)
	if err != nil || !ok {
		return "", err
	}
	if err = vfs.KeepAttrs(tf, path, rw.orig); err != nil {
		return "", err
	}
	if err = tf.Sync(); err != nil {
		return "", fmt.Errorf("sync %s: %w", tmp, err)
	}
	err = tf.Close()
	tf = nil
	if err != nil {
		return "", fmt.Errorf("close %s: %w", tmp, err)
	}
	if !rw.noBackup {
		if backup, err = linkBackup(fsys, path, rw.from); err != nil {
			return "", err
		}
	}
	if rw.ready != nil {
		if err = rw.ready(); err != nil {
			if backup != "" {
				_ = fsys.Remove(backup)
			}
			return "", err
		}
	}
	if err = fsys.Rename(tmp, path); err != nil {
		return backup, fmt.Errorf("replace %s: %w", path, err)
	}
	replaced = true
	if err = fsys.SyncDir(filepath.Dir(path)); err != nil {
		return backup, fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return backup, nil
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

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
