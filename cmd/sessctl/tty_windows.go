//go:build windows

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTTY reports whether f is a console: it has a console mode, which
// NUL, pipes and files do not.
func isTTY(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
