//go:build aix || linux || solaris || zos

package term

import "golang.org/x/sys/unix"

// ioctlGetTermios is tcgetattr's request on Linux and the System V
// systems.
const ioctlGetTermios = unix.TCGETS
