//go:build unix

package term

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// TestSignalContext sends the process SIGHUP: the context is cancelled
// with a cause that names the signal and matches context.Canceled, and
// the process lives on.
func TestSignalContext(t *testing.T) {
	ctx, stop := SignalContext()
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	cause := context.Cause(ctx)
	if !errors.Is(cause, context.Canceled) || cause.Error() != "stopped by SIGHUP (the terminal closed)" {
		t.Errorf("cause %v, want SIGHUP's matching context.Canceled", cause)
	}
}
