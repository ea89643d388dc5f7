package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Options configure File. The zero value writes beside the original at
// the current time.
type Options struct {
	// Output is where File writes the repaired session. It must not
	// exist: nothing is ever overwritten; nor may it be a name that
	// belongs to a session (see internal/sessionfile.CheckOutput). "" means
	// <name>.repaired-<unix ms>.jsonl in the directory of the original.
	Output string
	// Now gives the time for a made-up header and the default output
	// name; nil means time.Now.
	Now func() time.Time
	// FS is the filesystem the original is read and the output written
	// through; nil means vfs.OS().
	FS vfs.FS
}

// orOS is fsys, or the real filesystem when it is nil.
func orOS(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return vfs.OS()
	}
	return fsys
}

// File salvages the session file at path into a new, valid file, never
// modifying the original (read without a lock). When Verify finds nothing
// wrong, nothing is written and the result has no Output. Otherwise File
// repairs the bytes, checks the result with Verify (ErrVerify when it
// does not pass, which would be a bug) and writes it durably to
// opts.Output or beside the original: a temporary file is synced and
// linked into place, so the output is either absent or complete. Errors
// name the original file.
func File(path string, opts Options) (*Result, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	fsys := orOS(opts.FS)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	if Verify(path, data).OK {
		return &Result{Path: path, Changes: []Finding{}}, nil
	}
	fixed, res, err := Repair(path, data, now())
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	if rep := Verify(path, fixed); !rep.OK {
		// A bug: say what is still wrong rather than write it.
		return nil, fmt.Errorf("repair %s: %w: %s", path, ErrVerify, rep.Problems[0].Message)
	}
	target := opts.Output
	if target == "" {
		target, err = writeBeside(fsys, path, fixed, now())
	} else {
		err = writeNew(fsys, path, target, fixed)
	}
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	res.Output = &target
	res.Changed = true
	return res, nil
}

// writeBeside writes data to <name>.repaired-<ms>.jsonl next to path,
// picking a name that does not exist.
func writeBeside(fsys vfs.FS, path string, data []byte, now time.Time) (string, error) {
	base := strings.TrimSuffix(path, ".jsonl")
	ms := now.UnixMilli()
	for range 100 {
		target := base + ".repaired-" + strconv.FormatInt(ms, 10) + ".jsonl"
		err := writeNew(fsys, path, target, data)
		if !errors.Is(err, fs.ErrExist) {
			return target, err
		}
		ms++
	}
	return "", fmt.Errorf("no free name beside %s", path)
}

// writeNew writes data to target, which must not exist nor belong to a
// session (see internal/sessionfile.CheckOutput), durably: a
// temporary file is synced and then linked in place, so target is either
// absent or complete.
func writeNew(fsys vfs.FS, orig, target string, data []byte) error {
	if same(fsys, orig, target) {
		return fmt.Errorf("%s is the original: %w", target, fs.ErrExist)
	}
	owned := sessionfile.CheckOutput(fsys, target)
	if _, err := fsys.Lstat(target); err == nil {
		if owned != nil {
			return fmt.Errorf("%w: %w", owned, fs.ErrExist)
		}
		return fmt.Errorf("%s: %w", target, fs.ErrExist)
	}
	if owned != nil {
		return owned
	}
	tmp := vfs.TempName(target)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	defer fsys.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if st, err := fsys.Stat(orig); err == nil {
		// Owned like the original, when root repairs a user's session.
		if err := vfs.OwnLike(f, st); err != nil {
			f.Close()
			return fmt.Errorf("create %s: %w", target, err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fsys.Link(tmp, target); err != nil {
		return fmt.Errorf("create %s: %w", target, err)
	}
	if err := fsys.SyncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("sync directory of %s: %w", target, err)
	}
	return nil
}

// same reports whether a and b name the same file.
func same(fsys vfs.FS, a, b string) bool {
	sa, errA := fsys.Stat(a)
	sb, errB := fsys.Stat(b)
	if errA == nil && errB == nil {
		return vfs.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}
