//go:build !(linux || darwin)

package main

import "os"

// writeFileBuffers writes bufs to f one after the other (x/sys/unix has
// no Writev for this system).
func writeFileBuffers(f *os.File, bufs [][]byte) error {
	for _, b := range bufs {
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return nil
}
