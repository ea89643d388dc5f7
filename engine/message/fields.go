package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Fields keeps what a decoded object held beyond its Go fields: the
// members the type does not name (or whose value does not fit the Go
// field), as their JSON, and the order in which all members were read, so
// that writing the object back puts every member where it was. The zero
// value, that of a constructed object, writes pi's order.
type Fields struct {
	order []string          // member keys as read (first occurrence); nil when not decoded
	extra map[string][]byte // members kept as JSON, by key
	added []string          // keys SetExtra added that were not read
}

// Extra returns the JSON of a member kept as it was read (or set with
// SetExtra): one the Go type has no field for, or one whose value did not
// fit its field.
func (f *Fields) Extra(key string) (json.RawMessage, bool) {
	v, ok := f.extra[key]
	return json.RawMessage(v), ok
}

// SetExtra sets a member the Go type has no field for to the JSON value
// v (encoded as JSON.stringify would). A member that was read keeps its
// place; a new one is written after the others. A key the type has a
// field for is taken by this JSON in place of the field.
func (f *Fields) SetExtra(key string, v json.RawMessage) {
	if f.extra == nil {
		f.extra = make(map[string][]byte)
	}
	if _, ok := f.extra[key]; !ok && !slices.Contains(f.order, key) && !slices.Contains(f.added, key) {
		f.added = append(f.added, key)
	}
	f.extra[key] = slices.Clone(v)
}

// DeleteExtra removes a member kept as JSON. Deleting the key of a Go
// field that was read lets the field decide again: it is written when it
// is not the zero value (or required).
func (f *Fields) DeleteExtra(key string) {
	delete(f.extra, key)
	f.order = slices.DeleteFunc(f.order, func(k string) bool { return k == key })
	f.added = slices.DeleteFunc(f.added, func(k string) bool { return k == key })
}

// Keys returns the keys of the members that were read, in their order
// (nil for an object that was not decoded).
func (f *Fields) Keys() []string { return slices.Clone(f.order) }

func (f *Fields) decoded() bool { return f.order != nil }

// field is one Go field of a type: its JSON key, whether pi always writes
// it, whether the Go value is the zero value, and how to encode and
// decode it.
type field struct {
	key      string
	required bool
	zero     bool
	enc      func(dst []byte) ([]byte, error)
	dec      func(v []byte) bool
}

// encodeObject writes the fields and the kept members: in the order they
// were read when the object was decoded, then the fields that are set
// (or required, for a constructed object) and were not read, in pi's
// order, then members added with SetExtra.
func encodeObject(dst []byte, fs []field, f *Fields) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	n := 0
	member := func(k string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsonl.AppendString(dst, k)
		dst = append(dst, ':')
	}
	extra := func(k string, v []byte) {
		member(k)
		c, err := jsonl.Canonical(dst, v)
		if err != nil { // kept values were valid when read; SetExtra takes the caller's word
			c = append(dst, "null"...)
		}
		dst = c
	}
	var done uint64
	index := false
	for _, k := range f.order {
		index = index || arrayIndex(k)
		if v, ok := f.extra[k]; ok {
			extra(k, v)
			continue
		}
		for i := range fs {
			if fs[i].key == k {
				member(k)
				var err error
				if dst, err = fs[i].enc(dst); err != nil {
					return dst, err
				}
				done |= 1 << i
				break
			}
		}
	}
	decoded := f.decoded()
	for i := range fs {
		if done&(1<<i) != 0 {
			continue
		}
		if _, ok := f.extra[fs[i].key]; ok {
			continue
		}
		if !fs[i].zero || (fs[i].required && !decoded) {
			member(fs[i].key)
			var err error
			if dst, err = fs[i].enc(dst); err != nil {
				return dst, err
			}
		}
	}
	for _, k := range f.added {
		index = index || arrayIndex(k)
		if v, ok := f.extra[k]; ok {
			extra(k, v)
		}
	}
	dst = append(dst, '}')
	if index {
		// JavaScript writes array-index keys first, in numeric order.
		obj := bytes.Clone(dst[start:])
		if c, err := jsonl.Canonical(dst[:start], obj); err == nil {
			dst = c
		}
	}
	return dst, nil
}

// arrayIndex reports whether k is a canonical array index, which
// JavaScript orders before every other key.
func arrayIndex(k string) bool {
	if k == "" || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
		return false
	}
	v := 0
	for _, c := range []byte(k) {
		if c < '0' || c > '9' {
			return false
		}
		v = v*10 + int(c-'0')
	}
	return v < 1<<32-1
}

// decodeObject reads obj into the fields, keeping every other member and
// the order of all of them.
func decodeObject(obj []byte, fs []field, f *Fields) error {
	if jsonl.KindOf(obj) != jsonl.KindObject {
		return fmt.Errorf("decode message: %w: not an object", jsonl.ErrSyntax)
	}
	*f = Fields{order: []string{}}
	err := jsonl.Members(obj, func(m *jsonl.Member) bool {
		k := m.KeyString()
		if !slices.Contains(f.order, k) {
			f.order = append(f.order, k)
		}
		for i := range fs {
			if fs[i].key == k {
				if fs[i].dec(m.Value) {
					delete(f.extra, k)
					return true
				}
				break
			}
		}
		if f.extra == nil {
			f.extra = make(map[string][]byte)
		}
		f.extra[k] = slices.Clone(m.Value)
		return true
	})
	if err != nil {
		return fmt.Errorf("decode message: %w", err)
	}
	return nil
}

// The field constructors. Each decoder accepts a value only when encoding
// the decoded Go value gives back JSON.stringify of the value read, so a
// value a Go field cannot hold exactly stays as JSON.

func strField(key string, p *string, required bool) field {
	return field{key: key, required: required, zero: *p == "",
		enc: func(dst []byte) ([]byte, error) { return jsonl.AppendString(dst, *p), nil },
		dec: func(v []byte) bool {
			s, ok := jsonl.String(v)
			if !ok || !exact(v, jsonl.AppendString(nil, s)) {
				return false
			}
			*p = s
			return true
		}}
}

func boolField(key string, p *bool, required bool) field {
	return field{key: key, required: required, zero: !*p,
		enc: func(dst []byte) ([]byte, error) {
			if *p {
				return append(dst, "true"...), nil
			}
			return append(dst, "false"...), nil
		},
		dec: func(v []byte) bool {
			switch string(v) {
			case "true":
				*p = true
			case "false":
				*p = false
			default:
				return false
			}
			return true
		}}
}

func floatField(key string, p *float64, required bool) field {
	return field{key: key, required: required, zero: *p == 0,
		enc: func(dst []byte) ([]byte, error) { return jsonl.AppendNumber(dst, *p), nil },
		dec: func(v []byte) bool {
			x, ok := jsonl.Number(v)
			if !ok || !exact(v, jsonl.AppendNumber(nil, x)) {
				return false
			}
			*p = x
			return true
		}}
}

func intField(key string, p *int64, required bool) field {
	return field{key: key, required: required, zero: *p == 0,
		enc: func(dst []byte) ([]byte, error) { return jsonl.AppendNumber(dst, float64(*p)), nil },
		dec: func(v []byte) bool {
			x, ok := jsonl.Number(v)
			if !ok || x != float64(int64(x)) || x > 1<<53 || x < -(1<<53) || !exact(v, jsonl.AppendNumber(nil, x)) {
				return false
			}
			*p = int64(x)
			return true
		}}
}

// anyField is a member of any JSON value: decoded as json.RawMessage,
// encoded with JSON.stringify's rules (jsonl.Marshal); nil is absent, or
// ifNil when the member is required.
func anyField(key string, p *any, required bool, ifNil string) field {
	return field{key: key, required: required, zero: *p == nil,
		enc: func(dst []byte) ([]byte, error) {
			if *p == nil {
				return append(dst, ifNil...), nil
			}
			b, err := jsonl.Marshal(*p)
			if err != nil {
				return dst, fmt.Errorf("encode %s: %w", key, err)
			}
			return append(dst, b...), nil
		},
		dec: func(v []byte) bool {
			*p = json.RawMessage(slices.Clone(v))
			return true
		}}
}

// exact reports whether the encoding of a decoded value is the canonical
// form of the value read.
func exact(read, enc []byte) bool {
	if bytes.Equal(read, enc) {
		return true
	}
	c, err := jsonl.Canonical(nil, read)
	return err == nil && bytes.Equal(c, enc)
}
