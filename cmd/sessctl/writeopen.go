package main

import (
	"context"
	"flag"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
)

// waitFlag adds --wait to a mutating command: how long to wait for another
// writer to release the session before exiting 3.
func waitFlag(fs *flag.FlagSet) *time.Duration {
	return durationFlag(fs, "wait", 0, "wait up to `DURATION` (e.g. 10s, 2m) for another writer to release the session; 0 fails at once")
}

// openForWrite opens a session file for writing, taking its writer lock.
// With wait > 0 it waits that long for the lock. The returned cancel must
// be called after the session is closed.
func openForWrite(ctx context.Context, path string, wait time.Duration, o engine.Options) (*engine.Session, error) {
	o.LockMode = human.Or(o.LockMode, "write")
	o.Command = human.Or(o.Command, "sessctl")
	if wait <= 0 {
		return engine.Open(ctx, path, o)
	}
	o.Wait = true
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return engine.Open(wctx, path, o)
}
