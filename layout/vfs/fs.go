package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// FS is the filesystem seam every file operation of the libraries goes
// through (reads, writes, stats, directory listings), so that crash and
// fault tests can stand in for the operating system. OS returns the real
// one. Paths are plain OS paths.
type FS interface {
	// OpenFile opens a file like os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// ReadFile reads a whole file like os.ReadFile.
	ReadFile(name string) ([]byte, error)
	// Rename renames a file like os.Rename (atomic replace on POSIX).
	Rename(oldname, newname string) error
	// Link makes newname a hard link to oldname; it fails if newname exists.
	Link(oldname, newname string) error
	// Remove removes a file or empty directory.
	Remove(name string) error
	// RemoveAll removes name and everything below it, like os.RemoveAll
	// (symbolic links are removed, not followed); a missing name is no
	// error.
	RemoveAll(name string) error
	// Mkdir creates one directory with perm, like os.Mkdir: it fails
	// (fs.ErrExist) when name exists.
	Mkdir(name string, perm fs.FileMode) error
	// MkdirAll creates a directory and its parents with perm.
	MkdirAll(name string, perm fs.FileMode) error
	// Stat follows symlinks; Lstat does not.
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes the directory's entries (creates, renames) durable.
	SyncDir(name string) error
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	Name() string
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
}

// OS returns the real filesystem.
func OS() FS { return osFS{} }

type osFS struct{}

var _ FS = osFS{}

// OpenFile opens a file for reading through OpenRegular's checks: only a
// regular file is opened, without ever waiting on a named pipe. Opens for
// writing are os.OpenFile's, with delete sharing on Windows (see the
// package documentation).
func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_TRUNC) == 0 {
		f, err := openRegular(name, flag)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	f, err := openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ErrInUse is matched by errors.Is when a file could not be replaced
// because another program holds it open without allowing that (on
// Windows, an open without FILE_SHARE_DELETE; the same error code also
// means access denied). The rename did not happen: the file is as it was.
var ErrInUse = errors.New("the file is open in another program that does not allow it to be replaced, or access is denied")

type inUseError struct{ err error }

func (e *inUseError) Error() string { return e.err.Error() + " (" + ErrInUse.Error() + ")" }
func (e *inUseError) Unwrap() []error {
	return []error{e.err, ErrInUse}
}

// Rename is os.Rename on POSIX. On Windows it renames with POSIX
// semantics where the system has them, else with MoveFileEx
// (MOVEFILE_REPLACE_EXISTING); a failure to replace a file another
// program holds open matches ErrInUse.
func (osFS) Rename(o, n string) error {
	err := rename(o, n)
	if err != nil && renameInUse(err) {
		return &inUseError{err}
	}
	return err
}

func (osFS) ReadFile(name string) ([]byte, error)         { return ReadFile(osFS{}, name) }
func (osFS) Link(o, n string) error                       { return os.Link(o, n) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) Mkdir(name string, perm fs.FileMode) error    { return os.Mkdir(name, perm) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)       { return os.Lstat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }

// Lchown changes the owner and group of a file, not following a symbolic
// link (see ChownLike).
func (osFS) Lchown(name string, uid, gid int) error { return os.Lchown(name, uid, gid) }

// SyncDir makes name's entries durable: fsync of the directory (on
// darwin F_FULLFSYNC, see fullSync); nothing on Windows, which has no
// directory fsync (NTFS journals its metadata, and FlushFileBuffers of a
// directory handle needs write access a directory opened for reading
// lacks).
func (osFS) SyncDir(name string) error { return syncDir(name) }

// SameFile reports whether a and b describe the same file, for the
// FileInfo values of any FS: os.SameFile for the real filesystem, and the
// FileInfo's own SameFile method for filesystems that provide one (as
// CrashFS does). os.SameFile alone reports false for every FileInfo it did
// not make.
func SameFile(a, b fs.FileInfo) bool {
	if x, ok := a.(interface{ SameFile(fs.FileInfo) bool }); ok {
		return x.SameFile(b)
	}
	return os.SameFile(a, b)
}

// Modes for everything sessctl creates: sessions hold secrets.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)
