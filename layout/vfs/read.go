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
	if _, ok := fsys.(osFS); !ok {
		return fsys.ReadFile(name)
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
	n := runtime.GOMAXPROCS(0)
	if size < parallelReadMin || n < 2 {
		return readSized(f, size)
	}
	n = min(n, 8)
	buf := make([]byte, size)
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
			return readSized(io.NewSectionReader(f, 0, 1<<62), size)
		}
	}
	// Appends that landed after the Stat are read too, so the result never
	// stops in the middle of a line that was complete when we finished.
	rest, err := io.ReadAll(io.NewSectionReader(f, size, 1<<62))
	if err != nil {
		return nil, err
	}
	return append(buf, rest...), nil
}

// readSized reads r to its end into a buffer sized for size bytes (the
// file's size when it was opened; it may have grown or shrunk since).
func readSized(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || int64(int(size)) != size {
		size = 0
	}
	data := make([]byte, 0, int(size)+512)
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
