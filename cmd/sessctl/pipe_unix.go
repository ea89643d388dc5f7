//go:build unix

package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// isBrokenPipe reports whether err is a write to a pipe without a reader.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// catchSIGPIPE makes a write to a standard output without a reader fail
// with EPIPE instead of killing the process, so the command can end
// quietly with status 0. A caught signal is reset to its default in the
// programs sessctl starts (a summary command), unlike an ignored one.
func catchSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
