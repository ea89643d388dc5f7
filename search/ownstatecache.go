package search

import "path/filepath"

// stateCache is the own engine's state as a watched Index's last search
// left it (decoded once, not at every search: at 50,000 files its gob is
// some 100 ms of CPU each way), with the tag of the state file it is.
type stateCache struct {
	tag string
	st  *ownState
}

// readStateCached is readOwnState, or, for a watched Index whose state
// file is still the one its last search read or wrote (same tag: every
// write is a new file), the state kept from then. An update changes the
// state in place, so the kept one is given up to it (keepState keeps it
// again once the update is done).
//
// An update is also given the state its own search read under the lock
// shared and found behind the stores (readSt), when the state file is
// still that one: the lock was let go in between, but a writer would
// have made a new file or a longer log. A search in a new process that
// finds an append so decodes its state once, not twice.
func (x *Index) readStateCached(update bool) (*ownState, error) {
	c := x.stCache
	if update {
		x.stCache = nil
		if r := x.readSt; r != nil {
			x.readSt = nil
			o := &own{x: x, dir: x.ownDir()}
			if tag := o.stateTag(); tag != "" && tag == r.tag {
				return r.st, nil
			}
		}
	}
	path := filepath.Join(x.ownDir(), ownStateName)
	if c != nil && x.w != nil {
		o := &own{x: x, dir: x.ownDir()}
		if tag := o.stateTag(); tag != "" && tag == c.tag {
			return c.st, nil
		}
	}
	return readOwnState(x.fsys(), path)
}

// keepState keeps o's state, which the state file tagged tag holds, for
// the next search of a watched Index.
func (x *Index) keepState(o *own, tag string) {
	if x.w != nil && tag != "" && o.st != nil {
		x.stCache = &stateCache{tag: tag, st: o.st}
	}
}
