package vfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TempSuffix marks the temporary files of atomic writes:
// "<name>.tmp-<random>". Leftovers of a crash carry it and are never
// mistaken for sessions (they do not end in ".jsonl" or ".json").
const TempSuffix = ".tmp-"

// TempName returns a fresh temporary name beside path.
func TempName(path string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return path + TempSuffix + hex.EncodeToString(b[:])
}

// IsTempName reports whether name is a leftover temporary file of an
// atomic write.
func IsTempName(name string) bool { return strings.Contains(filepath.Base(name), TempSuffix) }

// WriteFileAtomic replaces path with data so that readers and crashes see
// either the old file or the whole new one: it writes a temporary file in
// the same directory (created exclusively, never through a symlink), syncs
// it, renames it over path and syncs the directory. The directory is
// created with DirMode when missing, durably (see MkdirAllSync). A new
// file gets perm; an existing one is first checked with CheckReplace (a
// read-only file, one the caller could not write, a symbolic link or a
// special file is refused) and its replacement keeps its permission bits,
// owner and group (see KeepAttrs); a new file gets the owner and group
// of its directory (see OwnLike). On failure the temporary file is
// removed and path is untouched.
func WriteFileAtomic(fsys FS, path string, data []byte, perm fs.FileMode) error {
	return writeFileAtomic(fsys, path, writeData(data), perm, true)
}

// WriteFileAtomicFrom is WriteFileAtomic with the content written by
// write into the temporary file as it goes, so that a large file is never
// held in memory. An error from write is returned as it is, and the
// temporary file is removed.
func WriteFileAtomicFrom(fsys FS, path string, write func(w io.Writer) error, perm fs.FileMode) error {
	return writeFileAtomic(fsys, path, write, perm, true)
}

func writeData(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// WriteFileAtomicNoSync is WriteFileAtomic without any fsync and without
// creating the directory, which must exist: readers and a crash of the
// process still see the old or the whole new file, but a power cut may
// leave either, or an empty file. For stores run without durability.
func WriteFileAtomicNoSync(fsys FS, path string, data []byte, perm fs.FileMode) error {
	return writeFileAtomic(fsys, path, writeData(data), perm, false)
}

func writeFileAtomic(fsys FS, path string, write func(io.Writer) error, perm fs.FileMode, durable bool) (err error) {
	dir := filepath.Dir(path)
	if durable {
		if err := MkdirAllSync(fsys, dir, DirMode); err != nil {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	orig, err := CheckReplace(fsys, path)
	if err != nil {
		return err
	}
	tmp := TempName(path)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|NoFollow, perm)
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	tw := &tempWriter{f: f}
	if err = write(tw); err != nil {
		_ = f.Close()
		if tw.err != nil {
			return fmt.Errorf("write %s: %w", tmp, tw.err)
		}
		return err
	}
	if err = KeepAttrs(f, path, orig); err != nil {
		_ = f.Close()
		return err
	}
	if orig == nil {
		if d, derr := fsys.Stat(dir); derr == nil {
			if err = OwnLike(f, d); err != nil {
				_ = f.Close()
				return fmt.Errorf("create %s: %w", path, err)
			}
		}
	}
	if durable {
		if err = f.Sync(); err != nil {
			_ = f.Close()
			return fmt.Errorf("sync %s: %w", tmp, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err = fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if durable {
		if err = fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("sync directory %s: %w", dir, err)
		}
	}
	return nil
}

// ErrReadOnly is matched by errors.Is when a file sessctl was asked to
// rewrite has no write permission bit at all. Its owner marked it
// read-only, so it is left alone even by a process (root) that could
// write it anyway.
var ErrReadOnly = errors.New("file is read-only (no write permission bit is set)")

// CheckReplace checks, before anything is written, that the file at path
// may be replaced by a rewrite (a temporary file renamed over it). It
// returns the file's Lstat, or nil when there is no file at path. It
// refuses a symbolic link (ErrSymlink), anything but a regular file
// (ErrNotRegular, or syscall.EISDIR), a file without any write bit
// (ErrReadOnly: even root, who could write it, leaves a file its owner
// marked read-only alone), and, on the real filesystem, a file the
// process may not write (the system's own access check: permission
// bits, ACLs, read-only mounts, immutable files). The errors name the
// file.
func CheckReplace(fsys FS, path string) (fs.FileInfo, error) {
	fi, err := fsys.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("replace %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("replace %s: %w", path, ErrSymlink)
	case fi.IsDir():
		return nil, fmt.Errorf("replace %s: %w", path, syscall.EISDIR)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("replace %s: %w", path, ErrNotRegular)
	case fi.Mode().Perm()&0o222 == 0:
		return nil, fmt.Errorf("replace %s: %w", path, ErrReadOnly)
	}
	if isOS(fsys) {
		if err := canWrite(path); err != nil {
			return nil, fmt.Errorf("replace %s: %w", path, err)
		}
	}
	return fi, nil
}

// KeepAttrs gives f, the temporary file that is to replace path, the
// permission bits, owner and group of the original (orig, from
// CheckReplace; nil for a new file, when nothing is done). The owner and
// group are set before the bits, which chown may clear. When they cannot
// be kept (a process other than root may not give a file away, nor give
// it a group it is not a member of), the rewrite is refused with an error
// rather than silently changing who owns the session. Extended attributes
// and ACLs are not copied. Filesystems other than the real one keep only
// what their files support.
func KeepAttrs(f File, path string, orig fs.FileInfo) error {
	if orig == nil {
		return nil
	}
	if err := keepOwner(f, orig); err != nil {
		return fmt.Errorf("replace %s: keep its owner and group: %w", path, err)
	}
	perm := orig.Mode().Perm()
	if st, err := f.Stat(); err == nil && st.Mode().Perm() == perm {
		return nil
	}
	if c, ok := f.(interface{ Chmod(fs.FileMode) error }); ok {
		if err := c.Chmod(perm); err != nil {
			return fmt.Errorf("replace %s: keep its mode %v: %w", path, perm, err)
		}
	}
	return nil
}

// isOS reports whether fsys is the real filesystem, possibly wrapped (as
// by FaultFS).
func isOS(fsys FS) bool {
	for {
		switch x := fsys.(type) {
		case osFS:
			return true
		case interface{ Unwrap() FS }:
			fsys = x.Unwrap()
		default:
			return false
		}
	}
}

// MkdirAllSync is MkdirAll that also makes the new directories durable:
// a directory's entry lives in its parent, so the parent of every
// directory it creates is synced. Without that, a power cut can take a
// new session directory away with every file that was synced inside it.
// Directories that already exist are left as they are. When it fails, it
// removes the directories it created, so that a later call creates and
// syncs them again instead of finding directories whose names may not be
// durable.
//
// The new directories get the owner and group of the directory they are
// made in (see OwnLike), so that a command run as root in a user's store
// leaves directories that user can write.
func MkdirAllSync(fsys FS, dir string, perm fs.FileMode) (err error) {
	dir = filepath.Clean(dir)
	var created []string // deepest first
	var parent fs.FileInfo
	for p := dir; ; p = filepath.Dir(p) {
		if parent, err = fsys.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	defer func() {
		if err != nil {
			for _, p := range created { // deepest first
				_ = fsys.Remove(p)
			}
		}
	}()
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	if parent != nil {
		for i := len(created) - 1; i >= 0; i-- { // outermost first
			if err := ChownLike(fsys, created[i], parent); err != nil {
				return fmt.Errorf("create directory %s: %w", created[i], err)
			}
		}
	}
	for _, p := range created {
		if err := fsys.SyncDir(filepath.Dir(p)); err != nil {
			return fmt.Errorf("sync directory %s: %w", filepath.Dir(p), err)
		}
	}
	return nil
}

// ErrSymlink is returned when a path that sessctl writes is a symbolic
// link it did not create.
var ErrSymlink = errors.New("refusing to write through a symbolic link")

// tempWriter remembers the temporary file's write error, to tell it from
// an error of the content's writer.
type tempWriter struct {
	f   File
	err error
}

func (w *tempWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}
