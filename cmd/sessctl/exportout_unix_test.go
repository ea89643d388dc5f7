//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"
)

// specialTargets are export targets only Unix can make: a named pipe
// (opening it to write would block until a reader comes).
func specialTargets(t *testing.T, dir string) []struct {
	name    string
	target  func() string
	force   bool
	code    int
	wantErr string
} {
	return []struct {
		name    string
		target  func() string
		force   bool
		code    int
		wantErr string
	}{
		{name: "a named pipe", target: func() string {
			p := filepath.Join(dir, "fifo.md")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, force: true, code: exitFailure, wantErr: "it is a named pipe"},
	}
}
