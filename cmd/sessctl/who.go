package main

import (
	"fmt"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/lock"
)

var whoCommand = newCommand("who", "show which process holds a session's writer lock")

func init() { whoCommand.run = runWho }

func runWho(e *env, args []string) int {
	fs := e.flags(whoCommand)
	store := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if code := e.parse(whoCommand, fs, args); code >= 0 {
		return code
	}
	path, code := e.sessionArg(*store, fs.Args())
	if code >= 0 {
		return code
	}
	lp := sessionfile.LockPath(path)
	st, err := lock.Inspect(lp)
	if err != nil {
		return e.fail(err)
	}
	if *asJSON {
		b := jsonl.NewObject(256).String("session", path).String("lockFile", lp).
			Bool("locked", st.Locked).Bool("stale", st.Stale).String("reason", st.Reason).Bool("fallback", st.Fallback)
		if st.Owner == nil {
			b.Null("holder")
		} else {
			o := st.Owner
			b.Raw("holder", jsonl.NewObject(256).Number("pid", float64(o.PID)).Number("startTime", float64(o.StartTime)).
				String("bootId", o.BootID).String("host", o.Host).String("user", o.User).String("command", o.Command).
				String("mode", o.Mode).String("since", o.Since.UTC().Format(time.RFC3339Nano)).Bytes())
		}
		fmt.Fprintf(e.stdout, "%s\n", b.Bytes())
		return exitOK
	}
	qpath := human.QuotePath(path)
	switch {
	case !st.Locked:
		fmt.Fprintf(e.stdout, "%s: not locked\n", qpath)
		if st.Owner != nil && st.Stale {
			fmt.Fprintf(e.stdout, "  (a stale owner record remains: %s)\n", st.Reason)
		}
	case st.Owner == nil:
		fmt.Fprintf(e.stdout, "%s: locked by a process that left no owner record\n", qpath)
	default:
		o := st.Owner
		fmt.Fprintf(e.stdout, "%s: locked by pid %d (%s", qpath, o.PID, human.QuotePath(o.Command))
		if o.User != "" {
			fmt.Fprintf(e.stdout, ", user %s", human.QuotePath(o.User))
		}
		fmt.Fprintf(e.stdout, ") on %s since %s (%s ago), mode %s\n", human.QuotePath(o.Host), o.Since.Local().Format("2006-01-02 15:04:05"),
			time.Since(o.Since).Round(time.Second), human.QuotePath(o.Mode))
		if st.Stale {
			fmt.Fprintf(e.stdout, "  the record is stale: %s; the lock is held by another process (perhaps a child that inherited it)\n", st.Reason)
		}
	}
	if st.Fallback {
		fmt.Fprintf(e.stdout, "  (exclusive-create fallback lock %s: this filesystem has no working flock)\n", human.QuotePath(lp+".excl"))
	}
	return exitOK
}
