package vfs

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lstatNamesOS is LstatNames on the real filesystem: dir opened with
// O_PATH (which, like a lookup through it, needs no permission to read
// the directory) and each name stat'ed at it. It reports false, having
// called fn for none, when dir cannot be opened so: the caller then
// stats each path, for the errors Lstat gives.
func lstatNamesOS(dir string, names []string, fn func(i int, a Attr, err error)) bool {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	var buf []byte // each name, NUL-terminated
	for i, n := range names {
		for {
			buf, err = fstatatNoFollow(fd, n, &st, buf)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			fn(i, Attr{}, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, n), Err: err})
			continue
		}
		fn(i, Attr{
			Mode:  modeOf(st.Mode),
			Size:  st.Size,
			Mtime: st.Mtim.Nano(),
			Ctime: st.Ctim.Nano(),
			ID:    uint64(st.Ino) ^ uint64(st.Dev)<<48,
		}, nil)
	}
	return true
}

// modeOf is the fs.FileMode of a stat's st_mode, as os.Lstat makes it.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
