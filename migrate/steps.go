package migrate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Step upgrades records from one format version to the next. Apply is
// called once per parsed line, in file order; index is the line's position
// among the parsed lines (the header is index 0), the numbering pi's
// firstKeptEntryIndex uses.
type Step struct {
	From, To int
	Apply    func(st *State, index int, r *Record)
}

// State is what steps carry from line to line within one file. Its size
// does not grow with the file: ids are a function of the line's position.
type State struct {
	// SessionID is the header's id; v1 ids are derived from it.
	SessionID string
	seed      uint32
	headers   map[int]bool // positions of header lines (there is usually one)
	prevID    string
	hasPrev   bool
}

// NewState starts the state of one file's migration.
func NewState(sessionID string) *State {
	sum := sha256.Sum256([]byte(sessionID))
	return &State{SessionID: sessionID, seed: binary.LittleEndian.Uint32(sum[:4]), headers: map[int]bool{}}
}

// Steps returns the chain of migrations, oldest first (a new slice each
// call: nothing a caller does to it changes how files migrate).
func Steps() []Step {
	return []Step{
		{From: 1, To: 2, Apply: v1ToV2},
		{From: 2, To: 3, Apply: v2ToV3},
	}
}

// EntryID returns the id the v1 step gives the parsed line at index: 8 hex
// digits of a bijective mix of the index and a seed taken from the session
// id (SHA-256). A bijection on 32 bits cannot map two lines to one id, so
// the ids of a file never collide, and unlike pi's random ids the result
// is the same on every run. No table of earlier ids is needed, which keeps
// migration memory independent of the file's size.
func (st *State) EntryID(index int) string {
	x := uint32(index) + st.seed
	// lowbias32 (Wellons): xorshifts and odd multipliers, each invertible.
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], x)
	return hex.EncodeToString(b[:])
}

// v1ToV2 gives every entry a fresh id and links the entries into one
// chain in file order; compactions get firstKeptEntryId from
// firstKeptEntryIndex; headers get version 2 (appended when missing).
func v1ToV2(st *State, index int, r *Record) {
	if t, _ := r.GetString("type"); t == jsonl.TypeSession {
		r.Set("version", []byte("2"))
		st.headers[index] = true
		return
	}
	id := st.EntryID(index)
	r.Set("id", jsonl.AppendString(nil, id))
	if st.hasPrev {
		r.Set("parentId", jsonl.AppendString(nil, st.prevID))
	} else {
		r.Set("parentId", []byte("null"))
	}
	st.prevID, st.hasPrev = id, true
	if t, _ := r.GetString("type"); t == jsonl.TypeCompaction {
		v, ok := r.Get("firstKeptEntryIndex")
		if ok && jsonl.KindOf(v) == jsonl.KindNumber {
			f, _ := jsonl.Number(v)
			k := int(f)
			if float64(k) == f && k >= 0 && k <= index && !st.headers[k] {
				// Every earlier line that is not a header has its id.
				r.Set("firstKeptEntryId", jsonl.AppendString(nil, st.EntryID(k)))
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
	case jsonl.TypeSession:
		r.Set("version", []byte("3"))
	case jsonl.TypeMessage:
		msg, ok := r.Get("message")
		if !ok || jsonl.KindOf(msg) != jsonl.KindObject {
			return
		}
		role, _ := jsonl.Lookup(msg, "role")
		if s, _ := jsonl.String(role); s != "hookMessage" {
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
