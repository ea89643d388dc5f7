package vfs

import (
	"io"
	"os"
	"runtime"
	"sync"
)

// parallelReadMin is the file size from which ReadFile reads with several
// threads: copying a large file out of the page cache is bound by one
// core's memory bandwidth.
const parallelReadMin = 8 << 20

// ReadFile reads a whole file through fsys. On the real filesystem only a
// regular file is read (see OpenRegular: a named pipe is refused instead
// of waited on), and a large one is read in parallel chunks (pread on
// every CPU), which halves the time of opening a session of hundreds of
// megabytes. A file that changes size meanwhile is read again the
// ordinary way.
func ReadFile(fsys FS, name string) ([]byte, error) {
	return ReadFileRoom(fsys, name, nil)
}

// headSize is how much of a file ReadFileRoom shows its room function.
const headSize = 4 << 10

// ReadFileRoom is ReadFile with room to grow: room, when not nil, is
// shown the file's first bytes (up to 4 KiB) and its size, and the bytes
// returned have that much capacity beyond their length, so that the
// caller can rewrite them in place into something longer (the capacity
// is only address space until it is written). On filesystems other than
// the real one the bytes are copied into a buffer with that room.
func ReadFileRoom(fsys FS, name string, room func(head []byte, size int64) int) ([]byte, error) {
	if _, ok := fsys.(osFS); !ok {
		data, err := fsys.ReadFile(name)
		if err != nil || room == nil {
			return data, err
		}
		if r := room(data[:min(len(data), headSize)], int64(len(data))); r > cap(data)-len(data) {
			data = append(make([]byte, 0, len(data)+r), data...)
		}
		return data, nil
	}
	f, err := openRegular(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	extra := 0
	if room != nil && size > 0 {
		head := make([]byte, min(size, headSize))
		n, _ := f.ReadAt(head, 0)
		extra = max(0, room(head[:n], size))
	}
	n := runtime.GOMAXPROCS(0)
	if size < parallelReadMin || n < 2 {
		return readSized(f, size, extra)
	}
	n = min(n, 8)
	buf := make([]byte, size, size+int64(extra))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		lo, hi := size*int64(k)/int64(n), size*int64(k+1)/int64(n)
		wg.Go(func() {
			_, errs[k] = f.ReadAt(buf[lo:hi], lo)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			// Shorter than it was (a concurrent truncation) or unreadable:
			// fall back to one sequential read of whatever is there now.
			return readSized(io.NewSectionReader(f, 0, 1<<62), size, extra)
		}
	}
	// Appends that landed after the Stat are read too, so the result never
	// stops in the middle of a line that was complete when we finished.
	rest, err := io.ReadAll(io.NewSectionReader(f, size, 1<<62))
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		buf = append(buf, rest...)
	}
	return buf, nil
}

// readSized reads r to its end into a buffer sized for size bytes (the
// file's size when it was opened; it may have grown or shrunk since) and
// extra more.
func readSized(r io.Reader, size int64, extra int) ([]byte, error) {
	if size < 0 || int64(int(size)) != size {
		size = 0
	}
	data := make([]byte, 0, int(size)+512+extra)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
