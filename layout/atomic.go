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
// created with DirMode when missing. On failure the temporary file is
// removed and path is untouched.
func WriteFileAtomic(fsys FS, path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := fsys.MkdirAll(dir, DirMode); err != nil {
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

// ErrSymlink is returned when a path that sessctl writes is a symbolic
// link it did not create.
var ErrSymlink = errors.New("refusing to write through a symbolic link")
