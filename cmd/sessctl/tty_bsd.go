//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package main

import "golang.org/x/sys/unix"

// ioctlGetTermios is tcgetattr's request on the BSDs and macOS.
const ioctlGetTermios = unix.TIOCGETA
