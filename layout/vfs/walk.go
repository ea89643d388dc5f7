package vfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// WalkDir walks the tree rooted at root through fsys as filepath.WalkDir
// walks the real one: fn is called for root and for every file and
// directory below it, in lexical order, with the DirEntry of its
// directory's listing (root's from Lstat); symbolic links are not
// followed; fs.SkipDir and fs.SkipAll work as there. An error listing a
// directory is given to fn a second time for that directory.
func WalkDir(fsys FS, root string, fn fs.WalkDirFunc) error {
	info, err := fsys.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkDir(fsys, root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

func walkDir(fsys FS, path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	ents, err := fsys.ReadDir(path)
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == fs.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		if err := walkDir(fsys, filepath.Join(path, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// Glob returns the names of the files matching pattern through fsys, as
// filepath.Glob does on the real filesystem: the same pattern syntax
// (filepath.Match), sorted within each directory, I/O errors ignored,
// filepath.ErrBadPattern for a malformed pattern.
func Glob(fsys FS, pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	if !hasMeta(pattern) {
		if _, err := fsys.Lstat(pattern); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	dir, file := filepath.Split(pattern)
	dir = cleanGlobPath(dir)
	if !hasMeta(dir[len(filepath.VolumeName(dir)):]) {
		return glob(fsys, dir, file, nil)
	}
	if dir == pattern { // a pattern of separators only
		return nil, filepath.ErrBadPattern
	}
	dirs, err := Glob(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		if out, err = glob(fsys, d, file, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// glob adds to matches the names in dir that match pattern.
func glob(fsys FS, dir, pattern string, matches []string) ([]string, error) {
	fi, err := fsys.Stat(dir)
	if err != nil || !fi.IsDir() {
		return matches, nil
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return matches, nil
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, n := range names {
		ok, err := filepath.Match(pattern, n)
		if err != nil {
			return matches, err
		}
		if ok {
			matches = append(matches, filepath.Join(dir, n))
		}
	}
	return matches, nil
}

func cleanGlobPath(path string) string {
	vol := filepath.VolumeName(path)
	switch rest := path[len(vol):]; rest {
	case "":
		return vol + "."
	case string(filepath.Separator):
		return path
	default:
		return path[:len(path)-1] // the trailing separator
	}
}

func hasMeta(path string) bool {
	magic := `*?[`
	if filepath.Separator != '\\' {
		magic = `*?[\`
	}
	return strings.ContainsAny(path, magic)
}

// MkdirTemp creates a new directory in dir through fsys, named pattern
// with its last "*" (or its end) replaced by a random string, mode
// DirMode, as os.MkdirTemp does, and returns its path. dir "" is not
// allowed: the caller names where temporary directories go.
func MkdirTemp(fsys FS, dir, pattern string) (string, error) {
	if dir == "" {
		return "", &fs.PathError{Op: "mkdirtemp", Path: pattern, Err: errors.New("no directory given")}
	}
	if strings.ContainsRune(pattern, filepath.Separator) {
		return "", &fs.PathError{Op: "mkdirtemp", Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for range 10000 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:])+suffix)
		err := fsys.Mkdir(name, DirMode)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", &fs.PathError{Op: "mkdirtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
