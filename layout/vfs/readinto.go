package vfs

import (
	"io"
	"io/fs"
	"os"
	"time"
)

// ReadInto reads the regular file name through fsys into buf (grown when
// it is too small; pass the result back in to reuse it) and returns the
// bytes with the size and modification time the file had when it was
// opened. It reads up to that size: a line appended since is not read.
// It is meant for reading many small files in a row, as a listing does:
// on Linux it makes four system calls a file (open, fstat, read, close)
// where OpenFile, Stat and Read make seven. A named pipe or other special
// file is refused as by OpenRegular.
func ReadInto(fsys FS, name string, buf []byte) (data []byte, size int64, mtime time.Time, err error) {
	data, st, err := ReadIntoInfo(fsys, name, buf)
	if st == nil {
		return data, 0, time.Time{}, err
	}
	return data, st.Size(), st.ModTime(), err
}

// ReadIntoInfo is ReadInto returning the whole stat the file had when it
// was opened (its Sys is a *syscall.Stat_t where the platform has one:
// FileID and ChangeTime read it), nil when the open failed.
func ReadIntoInfo(fsys FS, name string, buf []byte) (data []byte, st fs.FileInfo, err error) {
	if _, ok := fsys.(osFS); ok && rawReadInto {
		return readIntoRaw(name, buf)
	}
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return buf, nil, err
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return buf, nil, err
	}
	data, err = readUpTo(f.Read, buf, st.Size())
	return data, st, err
}

// readUpTo reads with read into buf[:0] until size bytes or the end of
// the file, whichever comes first.
func readUpTo(read func([]byte) (int, error), buf []byte, size int64) ([]byte, error) {
	data := buf[:0]
	if int64(cap(data)) < size+512 {
		data = make([]byte, 0, size+4096)
	}
	for int64(len(data)) < size {
		n, err := read(data[len(data):cap(data)])
		data = data[:len(data)+max(n, 0)]
		if err == io.EOF || (err == nil && n == 0) {
			break // shrunk since
		}
		if err != nil {
			return data, err
		}
	}
	return data, nil
}
