package term

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns the context a command-line program runs with:
// cancelled by SIGINT (Ctrl-C), SIGTERM (kill, service managers) or
// SIGHUP (the terminal closed), with a cause that names the signal, so
// that what the program started is stopped and its locks released before
// it exits. Signals after the first are caught too (the program is
// already stopping). stop stops catching them.
func SignalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-ch:
			cancel(&interrupted{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// interrupted is the cause of a command stopped by a signal; it matches
// context.Canceled.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string {
	switch e.sig {
	case os.Interrupt:
		return "interrupted (SIGINT, Ctrl-C)"
	case syscall.SIGTERM:
		return "stopped by SIGTERM"
	case syscall.SIGHUP:
		return "stopped by SIGHUP (the terminal closed)"
	}
	return "stopped by signal " + e.sig.String()
}

func (e *interrupted) Is(target error) bool { return target == context.Canceled }
