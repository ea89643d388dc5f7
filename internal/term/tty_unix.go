//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package term

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTTY reports whether f is a terminal: the terminal driver gives its
// settings (tcgetattr), which it does for no pipe, file or /dev/null.
func IsTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
