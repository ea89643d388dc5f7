package engine

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/lock"
)

// LockedError names the holder of a session's writer lock (pid, command,
// host, since): lock.LockedError. It matches ErrLocked.
type LockedError = lock.LockedError

// acquire takes the writer lock of a session file.
func acquire(ctx context.Context, file string, opts options) (*lock.Lock, error) {
	l, err := sessionfile.Acquire(ctx, file, sessionfile.LockOptions{
		Mode:    opts.LockMode,
		Command: opts.Command,
		Wait:    opts.Wait,
		FS:      opts.fs(),
	})
	if err != nil {
		return nil, fmt.Errorf("open session %s for writing: %w", file, err)
	}
	return l, nil
}
