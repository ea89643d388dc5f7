//go:build !windows && !darwin

package vfs

import "os"

// syncDir fsyncs the directory name.
func syncDir(name string) error {
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
