package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// waitFlag adds --wait to a mutating command: how long to wait for another
// writer to release the session before exiting 3.
func waitFlag(fs *flag.FlagSet) *time.Duration {
	return durationFlag(fs, "wait", 0, "wait up to `DURATION` (e.g. 10s, 2m) for another writer to release the session; 0 fails at once")
}

// openForWrite opens a session file for writing, taking its writer lock
// with command ("sessctl <cmd>") in its owner record. With wait > 0 it
// waits that long for the lock.
func openForWrite(ctx context.Context, path string, wait time.Duration, command string) (*engine.Session, error) {
	st := fileStore(path, engine.StoreOptions{Command: human.Or(command, "sessctl")})
	ctx, cancel := waitContext(ctx, wait)
	defer cancel()
	return st.Open(ctx, path, engine.OpenOptions{LockMode: "write", Wait: wait > 0})
}

// waitContext is ctx, bounded by wait when --wait gave one (wait > 0);
// cancel releases it.
func waitContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if wait <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, wait)
}

// openReadOnly opens a session file read-only.
func openReadOnly(ctx context.Context, path string) (*engine.Session, error) {
	return engine.OpenFile(ctx, path, engine.OpenOptions{ReadOnly: true})
}

// warnVersion warns on stderr when a file read read-only has a header of
// a newer format version than sessctl knows: the read commands go on with
// what they understand, the writing ones refuse such files.
func (e *env) warnVersion(path string, header jsonl.Entry) {
	if v := migrate.VersionOf(&header); v > jsonl.CurrentVersion {
		fmt.Fprintf(e.stderr, "sessctl: %s: warning: %s is format version %s; this sessctl knows up to %d, entries may be misread\n",
			e.name, human.QuotePath(path), jsonl.AppendNumber(nil, v), jsonl.CurrentVersion)
	}
}
