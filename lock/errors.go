package lock

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrLocked is returned, wrapped in a *LockedError, when another holder owns
// the lock.
var ErrLocked = errors.New("session is locked")

// LockedError reports who holds a lock. errors.Is(err, ErrLocked) is true.
type LockedError struct {
	Path   string    // the lock file: the flock file, or the ".excl" file in fallback mode
	Owner  *Owner    // nil when no owner record could be read
	Stale  bool      // the record does not describe the real holder (pid gone, start time differs)
	Reason string    // why the record is stale, or other detail
	Self   bool      // the holder is this very process (same session opened twice for writing)
	Now    time.Time // when the error was made, for "N min ago"
}

// Error describes the holder, for example "lock /s/x.lock: locked by pid
// 4821 (pi) on devbox since 10:22:05 (14 min ago)".
func (e *LockedError) Error() string {
	var b strings.Builder
	b.WriteString("lock ")
	b.WriteString(e.Path)
	b.WriteString(": ")
	o := e.Owner
	switch {
	case o == nil:
		reason := e.Reason
		if reason == "" {
			reason = "no owner record"
		}
		fmt.Fprintf(&b, "locked by another process (%s)", reason)
	case e.Self:
		fmt.Fprintf(&b, "already open for writing in this process (pid %d)%s", o.PID, since(o.Since, e.Now))
	case e.Stale:
		reason := e.Reason
		if reason == "" {
			reason = "it does not describe the holder"
		}
		fmt.Fprintf(&b, "locked, but the owner record is stale (%s): it names pid %d (%s) on %s%s; the kernel lock is still held by some other process, e.g. a child that inherited it",
			reason, o.PID, describe(o), o.Host, since(o.Since, e.Now))
	default:
		fmt.Fprintf(&b, "locked by pid %d (%s) on %s%s", o.PID, describe(o), o.Host, since(o.Since, e.Now))
		if e.Reason != "" {
			fmt.Fprintf(&b, "; %s", e.Reason)
		}
	}
	return b.String()
}

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// describe lists the command, a mode other than "write" and the user.
func describe(o *Owner) string {
	parts := make([]string, 0, 3)
	cmd := o.Command
	if cmd == "" {
		cmd = "unknown command"
	}
	parts = append(parts, cmd)
	if o.Mode != "" && o.Mode != "write" {
		parts = append(parts, o.Mode)
	}
	if o.User != "" {
		parts = append(parts, "user "+o.User)
	}
	return strings.Join(parts, ", ")
}

// since renders " since 10:22:05 (14 min ago)"; the date is added when t is
// not on now's day. It is "" for a zero t.
func since(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	loc := time.Local
	if !now.IsZero() {
		loc = now.Location()
	}
	t = t.In(loc)
	layout := "2006-01-02 15:04:05"
	if !now.IsZero() {
		n := now.In(loc)
		if t.Year() == n.Year() && t.YearDay() == n.YearDay() {
			layout = "15:04:05"
		}
	}
	s := " since " + t.Format(layout)
	if !now.IsZero() {
		if a := ago(now.Sub(t)); a != "" {
			s += " (" + a + ")"
		}
	}
	return s
}

// ago renders a duration as "just now", "42 s ago", "14 min ago",
// "3 h 5 min ago" or "2 days ago"; "" for a time clearly in the future.
func ago(d time.Duration) string {
	switch {
	case d < -time.Second:
		return ""
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h ago", h)
		}
		return fmt.Sprintf("%d h %d min ago", h, m)
	case d < 48*time.Hour:
		return "1 day ago"
	default:
		return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
	}
}
