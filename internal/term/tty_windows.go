//go:build windows

package term

import (
	"os"

	"golang.org/x/sys/windows"
)

// IsTTY reports whether f is a console: it has a console mode, which
// NUL, pipes and files do not.
func IsTTY(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
