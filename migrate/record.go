package migrate

import (
	"github.com/sessctl/sessctl/internal/jsonl"
)

// Record is one session line as an ordered list of members, the way a
// JavaScript object holds them: a repeated key keeps the position of its
// first occurrence and the value of its last. Values stay raw JSON until the
// record is encoded.
type Record struct {
	keys []string
	vals [][]byte
}

// ParseRecord decodes the members of a JSON object line.
func ParseRecord(raw []byte) (*Record, error) {
	r := &Record{}
	err := jsonl.Members(raw, func(m *jsonl.Member) bool {
		r.Set(m.KeyString(), m.Value)
		return true
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Record) find(k string) int {
	for i, key := range r.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// Get returns the raw value of member k.
func (r *Record) Get(k string) ([]byte, bool) {
	if i := r.find(k); i >= 0 {
		return r.vals[i], true
	}
	return nil, false
}

// GetString returns member k when it is a JSON string.
func (r *Record) GetString(k string) (string, bool) {
	v, ok := r.Get(k)
	if !ok {
		return "", false
	}
	return jsonl.String(v)
}

// Set replaces the value of member k in place, or appends the member when
// the record has no k: JavaScript's property assignment.
func (r *Record) Set(k string, v []byte) {
	if i := r.find(k); i >= 0 {
		r.vals[i] = v
		return
	}
	r.keys = append(r.keys, k)
	r.vals = append(r.vals, v)
}

// Delete removes member k.
func (r *Record) Delete(k string) {
	if i := r.find(k); i >= 0 {
		r.keys = append(r.keys[:i], r.keys[i+1:]...)
		r.vals = append(r.vals[:i], r.vals[i+1:]...)
	}
}

// Keys returns the member names in order.
func (r *Record) Keys() []string { return r.keys }

// AppendJSON appends the record as JSON.stringify writes the object: array
// index keys first, values canonical (compact, key order kept, strings
// and numbers as JSON.stringify writes them).
func (r *Record) AppendJSON(dst []byte) []byte {
	b := jsonl.NewObject(64)
	for i, k := range r.keys {
		b.Raw(k, r.vals[i])
	}
	out, err := jsonl.Canonical(dst, b.Bytes())
	if err != nil {
		// Values came from a valid parse or from the encoder; this cannot
		// happen, but never drop data if it does.
		return append(dst, b.Bytes()...)
	}
	return out
}
