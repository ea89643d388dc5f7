//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package term

import "golang.org/x/sys/unix"

// ioctlGetTermios is tcgetattr's request on the BSDs and macOS.
const ioctlGetTermios = unix.TIOCGETA
