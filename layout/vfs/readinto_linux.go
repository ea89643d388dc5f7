package vfs

import (
	"io"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

const rawReadInto = true

// readIntoRaw is ReadInto on the real filesystem, with system calls and
// no *os.File: the file is opened without waiting (O_NONBLOCK, so that a
// named pipe does not block), checked to be regular by the fstat that
// gives its size and time, and read with the flag still set, which a
// regular file ignores; should a read still answer EAGAIN, the flag is
// cleared and the read made again.
func readIntoRaw(name string, buf []byte) ([]byte, fs.FileInfo, error) {
	fd, st, err := openRegularFd(name, syscall.O_RDONLY)
	if err != nil {
		return buf, nil, err
	}
	defer syscall.Close(fd)
	cleared := false
	data, err := readUpTo(func(p []byte) (int, error) {
		for {
			n, err := syscall.Read(fd, p)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN && !cleared:
				if err := clearNonblock(fd, syscall.O_RDONLY); err != nil {
					return 0, err
				}
				cleared = true
				continue
			case err != nil:
				return 0, err
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}, buf, st.Size)
	fi := &statInfo{name: filepath.Base(name), st: *st}
	if err != nil {
		return buf, fi, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, fi, nil
}

// statInfo is the fs.FileInfo of a regular file's Stat_t.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode  { return fs.FileMode(s.st.Mode & 0o777) }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return false }
func (s *statInfo) Sys() any           { return &s.st }
