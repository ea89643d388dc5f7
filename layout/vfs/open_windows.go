package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// NoFollow is the open flag that refuses a symlink in the last path
// element; Windows has none, so writers rely on their Lstat checks.
const NoFollow = 0

// shareAll lets other handles read, write, delete and rename the file
// while it is open: without FILE_SHARE_DELETE, MoveFileEx over a file a
// reader holds open fails, and so would every rewrite (migration, repair,
// AgentUse's files) while pi or a sessctl reader has the file open.
const shareAll = syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE

// openShared is os.OpenFile with delete sharing. It supports the flags
// sessctl uses: O_RDONLY, O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC,
// O_APPEND. A file created without any write bit in perm gets the
// read-only attribute, as os.OpenFile does.
func openShared(name string, flag int, perm fs.FileMode) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(fixLongPath(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = syscall.GENERIC_READ
	case os.O_WRONLY:
		access = syscall.GENERIC_WRITE
	case os.O_RDWR:
		access = syscall.GENERIC_READ | syscall.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// Appends only: every write goes to the end of the file.
		if flag&os.O_TRUNC == 0 {
			access &^= syscall.GENERIC_WRITE
		}
		access |= syscall.FILE_APPEND_DATA | syscall.FILE_WRITE_ATTRIBUTES | 0x10 /* FILE_WRITE_EA */ | syscall.STANDARD_RIGHTS_WRITE | syscall.SYNCHRONIZE
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = syscall.CREATE_NEW
	case flag&(os.O_CREATE|os.O_TRUNC) == os.O_CREATE|os.O_TRUNC:
		create = syscall.CREATE_ALWAYS
	case flag&os.O_CREATE == os.O_CREATE:
		create = syscall.OPEN_ALWAYS
	case flag&os.O_TRUNC == os.O_TRUNC:
		create = syscall.TRUNCATE_EXISTING
	default:
		create = syscall.OPEN_EXISTING
	}
	attrs := uint32(syscall.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 && flag&os.O_CREATE != 0 {
		attrs = syscall.FILE_ATTRIBUTE_READONLY
	}
	h, err := syscall.CreateFile(p, access, shareAll, nil, create, attrs, 0)
	if err != nil {
		if errors.Is(err, syscall.ERROR_FILE_EXISTS) {
			err = syscall.ERROR_ALREADY_EXISTS // matches fs.ErrExist, as os.OpenFile's
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// openRegular opens name with flag and delete sharing, and refuses
// anything but a regular file. Windows opens no named pipe of the
// filesystem, so the open never waits.
func openRegular(name string, flag int) (*os.File, error) {
	f, err := openShared(name, flag, 0)
	if err != nil {
		if errors.Is(err, syscall.ERROR_ACCESS_DENIED) {
			// CreateFile of a directory without backup semantics.
			if st, serr := os.Stat(name); serr == nil && st.IsDir() {
				return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
			}
		}
		return nil, err
	}
	return keepRegular(f, name)
}

// openFile is the real filesystem's open for writing: with delete
// sharing, so that a rewrite can rename over a file an appender holds
// open.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return openShared(name, flag, perm)
}

// fixLongPath gives an absolute path longer than MAX_PATH the \\?\ prefix
// that lifts the limit (os.OpenFile does the same for its own opens).
// Relative paths, unclean ones (the prefix turns off the cleaning of
// "." and "..") and short ones are left alone.
func fixLongPath(p string) string {
	const maxPath = 248 // CreateDirectory's limit, the lowest of them
	if len(p) < maxPath || p[1] != ':' || (p[2] != '\\' && p[2] != '/') || filepath.Clean(p) != p {
		return p
	}
	b := []byte(`\\?\`)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '/' {
			c = '\\'
		}
		b = append(b, c)
	}
	return string(b)
}

// renameInUse reports whether err, from a rename over a file, means that
// another process holds the file open without delete sharing.
func renameInUse(err error) bool {
	return errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, syscall.Errno(32)) // ERROR_SHARING_VIOLATION
}
