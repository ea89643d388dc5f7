//go:build unix

package render

import "syscall"

// nonBlock opens without blocking, so a named pipe swapped in for a
// checked file cannot hang an open.
const nonBlock = syscall.O_NONBLOCK
