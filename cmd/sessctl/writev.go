package main

import (
	"io"
	"os"
)

// writeBuffers writes bufs in order. To a file (standard output, usually,
// unless it is a terminal) it hands them to the system in one go where it
// can (writev), so thousands of pieces cost a few system calls instead of
// one each.
func writeBuffers(w io.Writer, bufs [][]byte) error {
	switch f := w.(type) {
	case *os.File:
		return writeFileBuffers(f, bufs)
	case *stdoutWriter:
		if f.esc == nil {
			return f.check(writeFileBuffers(f.f, bufs))
		}
	}
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// consumed drops the first n bytes of bufs.
func consumed(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if len(bufs) > 0 && n > 0 {
		bufs[0] = bufs[0][n:]
	}
	return bufs
}
