package agentuse

import (
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// This file holds the ordered JSON object the AgentUse writer merges
// updates into. AgentUse reads a file, changes it with JavaScript's object
// spread or Object.assign, and writes it back, so an existing key keeps its
// position, a new key goes last, and a key set to undefined disappears. The
// object keeps its members as canonical compact JSON, which is what
// JSON.parse followed by JSON.stringify would see.

// Field is one member of an update or of a new part: Key set to
// Value, or removed when Delete is set (AgentUse's "key: undefined").
//
// Value is encoded as package engine encodes values: json.RawMessage and
// []byte are taken as JSON text and keep their key order, a string is a
// JSON string, anything else goes through encoding/json (so struct fields
// keep their declaration order and map keys are sorted). Every value is
// then written as JSON.stringify would write it.
type Field struct {
	Key    string
	Value  any
	Delete bool
}

// auObject is a JSON object as an ordered list of members.
type auObject struct {
	keys []string
	vals [][]byte // canonical compact JSON
}

// parseAUObject reads the JSON object in raw, a file at path. Anything but
// one valid JSON object is a *CorruptError naming the file.
func parseAUObject(path string, raw []byte) (*auObject, error) {
	c, err := jsonl.Canonical(nil, raw)
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	if jsonl.KindOf(c) != jsonl.KindObject {
		return nil, &CorruptError{Path: path, Err: errNotObject}
	}
	return objectOf(c), nil
}

var errNotObject = fmt.Errorf("not a JSON object")

// objectOf splits canonical compact object bytes into members. Canonical
// has already merged duplicate keys.
func objectOf(c []byte) *auObject {
	o := &auObject{}
	_ = jsonl.Members(c, func(m *jsonl.Member) bool {
		o.keys = append(o.keys, m.KeyString())
		o.vals = append(o.vals, m.Value)
		return true
	})
	return o
}

func (o *auObject) index(k string) int {
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// get returns the member's value, or nil when it is absent.
func (o *auObject) get(k string) []byte {
	if i := o.index(k); i >= 0 {
		return o.vals[i]
	}
	return nil
}

// set replaces the member in place, or appends it.
func (o *auObject) set(k string, v []byte) {
	if i := o.index(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *auObject) del(k string) {
	if i := o.index(k); i >= 0 {
		o.keys = append(o.keys[:i], o.keys[i+1:]...)
		o.vals = append(o.vals[:i], o.vals[i+1:]...)
	}
}

// sub returns the member k as an object: an empty one when it is absent or
// not an object (as spreading a non-object gives {}).
func (o *auObject) sub(k string) *auObject {
	v := o.get(k)
	if jsonl.KindOf(v) != jsonl.KindObject {
		return &auObject{}
	}
	return objectOf(v)
}

// merge applies fields as JavaScript's {...o, ...fields} does.
func (o *auObject) merge(fields []Field) error {
	for _, f := range fields {
		if f.Delete {
			o.del(f.Key)
			continue
		}
		v, err := encodeAUValue(f.Value)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Key, err)
		}
		o.set(f.Key, v)
	}
	return nil
}

// compact returns the object as compact JSON. Array-index keys are moved
// first when the bytes are canonicalised, as JavaScript orders them.
func (o *auObject) compact() []byte {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonl.AppendString(b, k)
		b = append(b, ':')
		b = append(b, o.vals[i]...)
	}
	return append(b, '}')
}

// encodeAUValue encodes a caller's value as canonical compact JSON.
func encodeAUValue(v any) ([]byte, error) {
	return jsonl.Marshal(v)
}

// auString returns the string member k of o, or "".
func (o *auObject) str(k string) string {
	s, _ := jsonl.String(o.get(k))
	return s
}
