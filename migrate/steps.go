package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/sessctl/sessctl/layout"
)

// Step upgrades records from one format version to the next. Apply is
// called once per parsed line, in file order; index is the line's position
// among the parsed lines (the header is index 0), the numbering pi's
// firstKeptEntryIndex uses.
type Step struct {
	From, To int
	Apply    func(st *State, index int, r *Record)
}

// State is what steps carry from line to line within one file.
type State struct {
	// SessionID is the header's id; v1 ids are derived from it.
	SessionID string
	// ids holds, for every parsed line so far, the id it had after the
	// v1 step ("" for headers), so compactions can resolve
	// firstKeptEntryIndex.
	ids     []string
	hasID   []bool
	isHdr   []bool
	seen    map[string]bool
	prevID  string
	hasPrev bool
}

// NewState starts the state of one file's migration.
func NewState(sessionID string) *State {
	return &State{SessionID: sessionID, seen: make(map[string]bool)}
}

// Steps is the chain of migrations, oldest first.
var Steps = []Step{
	{From: 1, To: 2, Apply: v1ToV2},
	{From: 2, To: 3, Apply: v2ToV3},
}

// EntryID returns the id the v1 step gives the parsed line at index of a
// session: the first 8 hex digits of SHA-256 over the session id, a NUL
// and the index, re-hashed with a counter while it collides with an id
// already given. Unlike pi's random ids, the result is the same on every
// run and never repeats within a file.
func (st *State) EntryID(index int) string {
	for attempt := 0; ; attempt++ {
		h := sha256.New()
		h.Write([]byte(st.SessionID))
		h.Write([]byte{0})
		h.Write(strconv.AppendInt(nil, int64(index), 10))
		if attempt > 0 {
			h.Write([]byte{0})
			h.Write(strconv.AppendInt(nil, int64(attempt), 10))
		}
		id := hex.EncodeToString(h.Sum(nil)[:4])
		if !st.seen[id] {
			st.seen[id] = true
			return id
		}
	}
}

func (st *State) record(index int, id string, has, hdr bool) {
	for len(st.ids) <= index {
		st.ids = append(st.ids, "")
		st.hasID = append(st.hasID, false)
		st.isHdr = append(st.isHdr, false)
	}
	st.ids[index], st.hasID[index], st.isHdr[index] = id, has, hdr
}

// v1ToV2 gives every entry a fresh id and links the entries into one
// chain in file order; compactions get firstKeptEntryId from
// firstKeptEntryIndex; headers get version 2 (appended when missing).
func v1ToV2(st *State, index int, r *Record) {
	if t, _ := r.GetString("type"); t == layout.TypeSession {
		r.Set("version", []byte("2"))
		st.record(index, "", false, true)
		return
	}
	id := st.EntryID(index)
	r.Set("id", layout.AppendString(nil, id))
	if st.hasPrev {
		r.Set("parentId", layout.AppendString(nil, st.prevID))
	} else {
		r.Set("parentId", []byte("null"))
	}
	st.prevID, st.hasPrev = id, true
	st.record(index, id, true, false)
	if t, _ := r.GetString("type"); t == layout.TypeCompaction {
		v, ok := r.Get("firstKeptEntryIndex")
		if ok && layout.KindOf(v) == layout.KindNumber {
			f, _ := layout.Number(v)
			k := int(f)
			if float64(k) == f && k >= 0 && k < len(st.ids) && !st.isHdr[k] {
				if st.hasID[k] {
					r.Set("firstKeptEntryId", layout.AppendString(nil, st.ids[k]))
				} else {
					// pi assigns undefined, which drops an existing key.
					r.Delete("firstKeptEntryId")
				}
			} else if float64(k) == f && k > index {
				// An index after the compaction reads an entry whose id is
				// not assigned yet: undefined.
				r.Delete("firstKeptEntryId")
			}
			r.Delete("firstKeptEntryIndex")
		}
	}
}

// v2ToV3 renames the hookMessage role to custom and sets version 3.
func v2ToV3(_ *State, _ int, r *Record) {
	t, _ := r.GetString("type")
	switch t {
	case layout.TypeSession:
		r.Set("version", []byte("3"))
	case layout.TypeMessage:
		msg, ok := r.Get("message")
		if !ok || layout.KindOf(msg) != layout.KindObject {
			return
		}
		role, _ := layout.Lookup(msg, "role")
		if s, _ := layout.String(role); s != "hookMessage" {
			return
		}
		m, err := ParseRecord(msg)
		if err != nil {
			return
		}
		m.Set("role", []byte(`"custom"`))
		r.Set("message", m.AppendJSON(nil))
	}
}
