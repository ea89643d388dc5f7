package term

import (
	"io"
	"os"
)

// WriteBuffers writes bufs in order. To a file (standard output, usually,
// unless it is a terminal) it hands them to the system in one go where it
// can (writev), so thousands of pieces cost a few system calls instead of
// one each.
func WriteBuffers(w io.Writer, bufs [][]byte) error {
	if f, ok := w.(*os.File); ok {
		return writeFile(f, bufs)
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
