//go:build !unix

package main

import "os"

// writeFileBuffers writes bufs to f one after the other.
func writeFileBuffers(f *os.File, bufs [][]byte) error {
	for _, b := range bufs {
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return nil
}
