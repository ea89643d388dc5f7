//go:build !(darwin || linux || openbsd)

package term

import (
	"bufio"
	"os"
)

// writeFile writes bufs to f through a buffer: this system has no
// writev in golang.org/x/sys.
func writeFile(f *os.File, bufs [][]byte) error {
	w := bufio.NewWriterSize(f, 64<<10)
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}
