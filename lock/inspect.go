package lock

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Status is what Inspect reports about a lock file, for `sessctl who`.
type Status struct {
	Locked   bool   // a holder exists right now
	Owner    *Owner // the record found beside the lock (or in the fallback file), if any
	Stale    bool   // the record does not describe a live holder
	Reason   string // why the record is stale, or other detail
	Fallback bool   // the exclusive-create fallback file is in use
}

// Inspect reports whether the lock at path is held and by whom. It never
// blocks and never writes anything. It probes the kernel lock with a
// non-blocking TryLock that, if it succeeds, is released at once; during
// that moment an Acquire without Wait would see ErrLocked. In fallback mode
// the ".excl" file counts as held unless its record is stale.
func Inspect(path string) (Status, error) {
	me := currentSelf()
	held, perr := probeFlock(path)
	if perr != nil && !isNoLock(perr) {
		return Status{}, fmt.Errorf("inspect lock %s: %w", path, perr)
	}
	if held {
		rec, _ := readRecord(vfs.OS(), OwnerPath(path))
		st := Status{Locked: true, Owner: rec.Owner, Reason: rec.Reason}
		v, reason := judge(rec.Owner, me)
		switch v {
		case selfHeld:
			st.Reason = "held by this process"
		case stale, otherBoot:
			st.Stale, st.Reason = true, reason
		case otherHost:
			st.Reason = reason
		}
		return st, nil
	}

	rec, err := readRecord(vfs.OS(), exclPath(path))
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errSymlink) {
		st := Status{Locked: true, Fallback: true, Owner: rec.Owner, Reason: rec.Reason}
		v, reason := judge(rec.Owner, me)
		switch v {
		case stale:
			st.Locked, st.Stale, st.Reason = false, true, reason
		case selfHeld:
			st.Reason = "held by this process"
		case otherHost, otherBoot:
			st.Reason = reason
		}
		return st, nil
	}

	var st Status
	if rec, err := readRecord(vfs.OS(), OwnerPath(path)); err == nil && rec.Owner != nil {
		st.Owner = rec.Owner
		st.Stale = true
		st.Reason = "not locked: the record is left from a holder that did not release the lock cleanly"
	}
	if perr != nil {
		st.Reason = "the file system does not support kernel locks; only the fallback file was checked"
	}
	return st, nil
}
