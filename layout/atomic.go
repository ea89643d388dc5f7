package layout

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
// created with DirMode when missing, durably (see MkdirAllSync). On failure the temporary file is
// removed and path is untouched.
func WriteFileAtomic(fsys FS, path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := MkdirAllSync(fsys, dir, DirMode); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	if fi, err := fsys.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("replace %s: %w", path, ErrSymlink)
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
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err = fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err = fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAllSync is MkdirAll that also makes the new directories durable:
// a directory's entry lives in its parent, so the parent of every
// directory it creates is synced. Without that, a power cut can take a
// new session directory away with every file that was synced inside it.
// Directories that already exist are left as they are. When it fails, it
// removes the directories it created, so that a later call creates and
// syncs them again instead of finding directories whose names may not be
// durable.
func MkdirAllSync(fsys FS, dir string, perm fs.FileMode) (err error) {
	dir = filepath.Clean(dir)
	var created []string // deepest first
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := fsys.Stat(p); !errors.Is(err, fs.ErrNotExist) {
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
