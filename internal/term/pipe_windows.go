//go:build windows

package term

import (
	"errors"
	"syscall"
)

// errorNoData is ERROR_NO_DATA, "the pipe is being closed".
const errorNoData = syscall.Errno(232)

// IsBrokenPipe reports whether err is a write to a pipe without a reader.
func IsBrokenPipe(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, errorNoData) || errors.Is(err, syscall.EPIPE)
}

// CatchSIGPIPE does nothing: Windows has no SIGPIPE.
func CatchSIGPIPE() {}
