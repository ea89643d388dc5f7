package vfs

import (
	"io"
	"io/fs"
	"os"
)

// FS is the filesystem seam every write goes through, so that crash and
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
// writing are os.OpenFile's.
func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_TRUNC) == 0 {
		f, err := openRegular(name, flag)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) ReadFile(name string) ([]byte, error)         { return ReadFile(osFS{}, name) }
func (osFS) Rename(o, n string) error                     { return os.Rename(o, n) }
func (osFS) Link(o, n string) error                       { return os.Link(o, n) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)       { return os.Lstat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

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
