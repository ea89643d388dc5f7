//go:build unix

package term

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// IsBrokenPipe reports whether err is a write to a pipe without a reader.
func IsBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// CatchSIGPIPE, called once by a main program, makes a write to a standard output without a reader fail
// with EPIPE instead of killing the process, so the command can end
// quietly with status 0. A caught signal is reset to its default in the
// programs the process starts (a summary command), unlike an ignored one.
func CatchSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
