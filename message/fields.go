package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

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

// field is one Go field of the object type T: its JSON key, whether pi
// always writes it, and how to tell whether it holds the zero value,
// encode and decode it. Each type's fields are one table, built once; its
// functions take the object, so that encoding allocates nothing for them.
type field[T any] struct {
	key      string
	member   string // `,"key":`, the member's start after another
	required bool
	zero     func(m *T) bool
	enc      func(dst []byte, m *T, canon bool) ([]byte, error)
	dec      func(m *T, v []byte) bool
}

// encodeObject writes the fields of m and the kept members f: in the
// order they were read when the object was decoded, then the fields that
// are set (or required, for a constructed object) and were not read, in
// pi's order, then members added with SetExtra.
//
// With canon, the object written is also what jsonl.Canonical makes of
// it (Encode writes that too, except for keys that are not valid UTF-8:
// two such keys can be written as the same key, which Canonical merges),
// so that AppendJSON needs no second pass over the bytes.
func encodeObject[T any](dst []byte, m *T, fs []field[T], f *Fields, canon bool) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	var err error
	if f.order == nil && len(f.extra) == 0 {
		// Constructed, without kept members (the usual case): the fields
		// that are set or required, in pi's order.
		for i := range fs {
			if fs[i].required || !fs[i].zero(m) {
				dst = appendMember(dst, start, fs[i].member)
				if dst, err = fs[i].enc(dst, m, canon); err != nil {
					return dst, err
				}
			}
		}
		return append(dst, '}'), nil
	}
	var done uint64
	again := false // the object must go through Canonical
	for _, k := range f.order {
		again = again || reordered(k, canon)
		if v, ok := f.extra[k]; ok {
			dst = appendExtra(dst, start, k, v)
			continue
		}
		for i := range fs {
			if fs[i].key == k {
				dst = appendMember(dst, start, fs[i].member)
				if dst, err = fs[i].enc(dst, m, canon); err != nil {
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
		if (fs[i].required && !decoded) || !fs[i].zero(m) {
			dst = appendMember(dst, start, fs[i].member)
			if dst, err = fs[i].enc(dst, m, canon); err != nil {
				return dst, err
			}
		}
	}
	for _, k := range f.added {
		again = again || reordered(k, canon)
		if v, ok := f.extra[k]; ok {
			dst = appendExtra(dst, start, k, v)
		}
	}
	dst = append(dst, '}')
	if again {
		// JavaScript writes array-index keys first, in numeric order.
		obj := bytes.Clone(dst[start:])
		if c, err := jsonl.Canonical(dst[:start], obj); err == nil {
			dst = c
		}
	}
	return dst, nil
}

// memberOf returns `,"key":`, a member's start after another.
func memberOf(key string) string {
	return "," + string(jsonl.AppendString(nil, key)) + ":"
}

// appendMember starts a member of the object that starts at dst[start]
// with member (`,"key":`), without the comma when it is the first.
func appendMember(dst []byte, start int, member string) []byte {
	if len(dst) == start+1 {
		return append(dst, member[1:]...)
	}
	return append(dst, member...)
}

// appendExtra appends a kept member, its value encoded as
// JSON.stringify would.
func appendExtra(dst []byte, start int, k string, v []byte) []byte {
	if len(dst) > start+1 {
		dst = append(dst, ',')
	}
	dst = jsonl.AppendString(dst, k)
	dst = append(dst, ':')
	c, err := jsonl.Canonical(dst, v)
	if err != nil { // kept values were valid when read; SetExtra takes the caller's word
		c = append(dst, "null"...)
	}
	return c
}

// reordered reports whether an object with the key k must go through
// jsonl.Canonical: an array index, which JavaScript orders first, or,
// with canon, a key that is not valid UTF-8 (written with U+FFFD, which
// can make it another key's twin).
func reordered(k string, canon bool) bool {
	return arrayIndex(k) || (canon && !utf8.ValidString(k))
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

// decodeObject reads obj into the fields of m, keeping every other member
// and the order of all of them in f.
func decodeObject[T any](obj []byte, m *T, fs []field[T], f *Fields) error {
	if jsonl.KindOf(obj) != jsonl.KindObject {
		return fmt.Errorf("decode message: %w: not an object", jsonl.ErrSyntax)
	}
	*f = Fields{order: []string{}}
	err := jsonl.Members(obj, func(mem *jsonl.Member) bool {
		k := mem.KeyString()
		if !slices.Contains(f.order, k) {
			f.order = append(f.order, k)
		}
		for i := range fs {
			if fs[i].key == k {
				if fs[i].dec(m, mem.Value) {
					delete(f.extra, k)
					return true
				}
				break
			}
		}
		if f.extra == nil {
			f.extra = make(map[string][]byte)
		}
		f.extra[k] = slices.Clone(mem.Value)
		return true
	})
	if err != nil {
		return fmt.Errorf("decode message: %w", err)
	}
	return nil
}

// The field constructors, each given the field's place in the object.
// Each decoder accepts a value only when encoding the decoded Go value
// gives back JSON.stringify of the value read, so a value a Go field
// cannot hold exactly stays as JSON.

// constField is the "role" or "type" member, whose value is the type's.
func constField[T any](key, value string) field[T] {
	return field[T]{key: key, member: memberOf(key), required: true,
		zero: func(*T) bool { return false },
		enc: func(dst []byte, _ *T, _ bool) ([]byte, error) {
			return jsonl.AppendString(dst, value), nil
		},
		dec: func(_ *T, v []byte) bool {
			s, ok := jsonl.String(v)
			return ok && s == value && exact(v, jsonl.AppendString(nil, s))
		}}
}

func strField[T any](key string, required bool, p func(*T) *string) field[T] {
	return field[T]{key: key, member: memberOf(key), required: required,
		zero: func(m *T) bool { return *p(m) == "" },
		enc: func(dst []byte, m *T, _ bool) ([]byte, error) {
			return jsonl.AppendString(dst, *p(m)), nil
		},
		dec: func(m *T, v []byte) bool {
			s, ok := decodeString(v)
			if ok {
				*p(m) = s
			}
			return ok
		}}
}

// decodeString returns the string v when a Go string holds it exactly.
func decodeString(v []byte) (string, bool) {
	s, ok := jsonl.String(v)
	if !ok || !exact(v, jsonl.AppendString(nil, s)) {
		return "", false
	}
	return s, true
}

func boolField[T any](key string, required bool, p func(*T) *bool) field[T] {
	return field[T]{key: key, member: memberOf(key), required: required,
		zero: func(m *T) bool { return !*p(m) },
		enc: func(dst []byte, m *T, _ bool) ([]byte, error) {
			if *p(m) {
				return append(dst, "true"...), nil
			}
			return append(dst, "false"...), nil
		},
		dec: func(m *T, v []byte) bool {
			switch string(v) {
			case "true":
				*p(m) = true
			case "false":
				*p(m) = false
			default:
				return false
			}
			return true
		}}
}

func floatField[T any](key string, required bool, p func(*T) *float64) field[T] {
	return field[T]{key: key, member: memberOf(key), required: required,
		zero: func(m *T) bool { return *p(m) == 0 },
		enc: func(dst []byte, m *T, _ bool) ([]byte, error) {
			return jsonl.AppendNumber(dst, *p(m)), nil
		},
		dec: func(m *T, v []byte) bool {
			x, ok := jsonl.Number(v)
			if !ok || !exact(v, jsonl.AppendNumber(nil, x)) {
				return false
			}
			*p(m) = x
			return true
		}}
}

func intField[T any](key string, required bool, p func(*T) *int64) field[T] {
	return field[T]{key: key, member: memberOf(key), required: required,
		zero: func(m *T) bool { return *p(m) == 0 },
		enc: func(dst []byte, m *T, _ bool) ([]byte, error) {
			return appendInt(dst, *p(m)), nil
		},
		dec: func(m *T, v []byte) bool {
			x, ok := decodeInt(v)
			if ok {
				*p(m) = x
			}
			return ok
		}}
}

// appendInt appends x as JSON.stringify writes the number float64(x).
func appendInt(dst []byte, x int64) []byte {
	if x > -1<<53 && x < 1<<53 {
		// Exact as a double: Number::toString writes its digits.
		return strconv.AppendInt(dst, x, 10)
	}
	return jsonl.AppendNumber(dst, float64(x))
}

// decodeInt returns the number v when an int64 holds it exactly.
func decodeInt(v []byte) (int64, bool) {
	x, ok := jsonl.Number(v)
	if !ok || x != float64(int64(x)) || x > 1<<53 || x < -(1<<53) || !exact(v, jsonl.AppendNumber(nil, x)) {
		return 0, false
	}
	return int64(x), true
}

// anyField is a member of any JSON value: decoded as json.RawMessage,
// encoded with JSON.stringify's rules (jsonl.Marshal); nil is absent, or
// ifNil when the member is required.
func anyField[T any](key string, required bool, ifNil string, p func(*T) *any) field[T] {
	return field[T]{key: key, member: memberOf(key), required: required,
		zero: func(m *T) bool { return *p(m) == nil },
		enc: func(dst []byte, m *T, _ bool) ([]byte, error) {
			v := *p(m)
			if v == nil {
				return append(dst, ifNil...), nil
			}
			out, err := jsonl.AppendMarshal(dst, v)
			if err != nil {
				return dst, fmt.Errorf("encode %s: %w", key, err)
			}
			return out, nil
		},
		dec: func(m *T, v []byte) bool {
			*p(m) = json.RawMessage(slices.Clone(v))
			return true
		}}
}

// objField is a nested object member (required), whose own fields are fs
// and kept members base(o).
func objField[T, O any](key string, p func(*T) *O, fs []field[O], base func(*O) *Fields) field[T] {
	return field[T]{key: key, member: memberOf(key), required: true,
		zero: func(m *T) bool {
			o := p(m)
			f := base(o)
			if f.decoded() || len(f.extra) != 0 {
				return false
			}
			for i := range fs {
				if !fs[i].zero(o) {
					return false
				}
			}
			return true
		},
		enc: func(dst []byte, m *T, canon bool) ([]byte, error) {
			o := p(m)
			return encodeObject(dst, o, fs, base(o), canon)
		},
		dec: func(m *T, v []byte) bool {
			o := p(m)
			return decodeObject(v, o, fs, base(o)) == nil
		}}
}

// objSliceField is an optional array of objects of type O, whose own
// fields are fs and kept members base(o): written when not empty. An
// array holding anything but objects stays as JSON.
func objSliceField[T, O any](key string, p func(*T) *[]O, fs []field[O], base func(*O) *Fields) field[T] {
	return field[T]{key: key, member: memberOf(key),
		zero: func(m *T) bool { return *p(m) == nil },
		enc: func(dst []byte, m *T, canon bool) ([]byte, error) {
			dst = append(dst, '[')
			for i := range *p(m) {
				if i > 0 {
					dst = append(dst, ',')
				}
				o := &(*p(m))[i]
				var err error
				if dst, err = encodeObject(dst, o, fs, base(o), canon); err != nil {
					return dst, err
				}
			}
			return append(dst, ']'), nil
		},
		dec: func(m *T, v []byte) bool {
			if jsonl.KindOf(v) != jsonl.KindArray {
				return false
			}
			out := []O{}
			ok := true
			err := jsonl.Elements(v, func(e []byte) bool {
				var o O
				if decodeObject(e, &o, fs, base(&o)) != nil {
					ok = false
					return false
				}
				out = append(out, o)
				return true
			})
			if err != nil || !ok {
				return false
			}
			*p(m) = out
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
