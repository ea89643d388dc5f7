package render

import (
	"fmt"
	"io"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/lock"
)

// LockStatusJSON returns the writer lock of a session (lock.Inspect of
// its lock file lockFile) as one JSON object: 'sessctl who --json'.
func LockStatusJSON(session, lockFile string, st lock.Status) []byte {
	b := jsonl.NewObject(256).String("session", session).String("lockFile", lockFile).
		Bool("locked", st.Locked).Bool("stale", st.Stale).String("reason", st.Reason).Bool("fallback", st.Fallback)
	if st.Owner == nil {
		b.Null("holder")
	} else {
		o := st.Owner
		b.Raw("holder", jsonl.NewObject(256).Number("pid", float64(o.PID)).Number("startTime", float64(o.StartTime)).
			String("bootId", o.BootID).String("host", o.Host).String("user", o.User).String("command", o.Command).
			String("mode", o.Mode).String("since", o.Since.UTC().Format(time.RFC3339Nano)).Bytes())
	}
	return b.Bytes()
}

// LockStatus writes the writer lock of a session for people, as 'sessctl
// who' does: not locked, or who holds it (pid, command, user, host,
// since when, mode), and whether the record is stale or the lock is the
// exclusive-create fallback.
func LockStatus(w io.Writer, session, lockFile string, st lock.Status) error {
	ew := &errWriter{w: w}
	qpath := human.QuotePath(session)
	switch {
	case !st.Locked:
		fmt.Fprintf(ew, "%s: not locked\n", qpath)
		if st.Owner != nil && st.Stale {
			fmt.Fprintf(ew, "  (a stale owner record remains: %s)\n", st.Reason)
		}
	case st.Owner == nil:
		fmt.Fprintf(ew, "%s: locked by a process that left no owner record\n", qpath)
	default:
		o := st.Owner
		fmt.Fprintf(ew, "%s: locked by pid %d (%s", qpath, o.PID, human.QuotePath(o.Command))
		if o.User != "" {
			fmt.Fprintf(ew, ", user %s", human.QuotePath(o.User))
		}
		fmt.Fprintf(ew, ") on %s since %s (%s ago), mode %s\n", human.QuotePath(o.Host), o.Since.Local().Format("2006-01-02 15:04:05"),
			time.Since(o.Since).Round(time.Second), human.QuotePath(o.Mode))
		if st.Stale {
			fmt.Fprintf(ew, "  the record is stale: %s; the lock is held by another process (perhaps a child that inherited it)\n", st.Reason)
		}
	}
	if st.Fallback {
		fmt.Fprintf(ew, "  (exclusive-create fallback lock %s: this filesystem has no working flock)\n", human.QuotePath(lockFile+".excl"))
	}
	return ew.err
}
