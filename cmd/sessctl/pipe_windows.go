//go:build windows

package main

import (
	"errors"
	"syscall"
)

// errorNoData is ERROR_NO_DATA, "the pipe is being closed".
const errorNoData = syscall.Errno(232)

// isBrokenPipe reports whether err is a write to a pipe without a reader.
func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, errorNoData) || errors.Is(err, syscall.EPIPE)
}

// catchSIGPIPE does nothing: Windows has no SIGPIPE.
func catchSIGPIPE() {}
