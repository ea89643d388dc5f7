package jsonl

// ObjectBuilder writes a compact JSON object member by member, in the order
// the members are added, as JSON.stringify writes an object literal. Keys
// must not be array indices (JavaScript would move those first); the entry
// types of both formats have none.
type ObjectBuilder struct {
	buf []byte
}

// NewObject starts an object with room for about size bytes (and for a
// newline after it, so writing it as a line needs no copy).
func NewObject(size int) *ObjectBuilder {
	return new(ObjectBuilder).Start(size)
}

// Start begins a new object in b, as NewObject does, so that a builder can
// live inside another value (a zero ObjectBuilder must be started before
// use).
func (b *ObjectBuilder) Start(size int) *ObjectBuilder {
	return b.StartIn(make([]byte, 0, size+2))
}

// StartIn begins a new object at the end of buf, using its spare capacity
// (and growing out of it like append when it runs out), so that a caller
// can build many objects in one block of memory.
func (b *ObjectBuilder) StartIn(buf []byte) *ObjectBuilder {
	b.buf = append(buf, '{')
	return b
}

func (b *ObjectBuilder) key(k string) {
	// A value never ends in '{': only a new object's opening does (the
	// buffer may hold other bytes before it, see StartIn).
	if b.buf[len(b.buf)-1] != '{' {
		b.buf = append(b.buf, ',')
	}
	plain := true
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain { // every key of both formats: no escaping to do
		b.buf = append(b.buf, '"')
		b.buf = append(b.buf, k...)
		b.buf = append(b.buf, '"', ':')
		return
	}
	b.buf = AppendString(b.buf, k)
	b.buf = append(b.buf, ':')
}

// Raw adds a member whose value is already canonical JSON.
func (b *ObjectBuilder) Raw(k string, v []byte) *ObjectBuilder {
	b.key(k)
	b.buf = append(b.buf, v...)
	return b
}

// Canonical adds a member whose value is the JSON text v, encoded as
// Canonical encodes it, without an intermediate copy.
func (b *ObjectBuilder) Canonical(k string, v []byte) error {
	b.key(k)
	out, err := Canonical(b.buf, v)
	if err != nil {
		return err
	}
	b.buf = out
	return nil
}

// Append adds a member whose value enc appends to the bytes it is given:
// canonical JSON, as Raw takes, written straight into the object. When
// enc fails, the builder must not be used again.
func (b *ObjectBuilder) Append(k string, enc func(dst []byte) ([]byte, error)) error {
	b.key(k)
	out, err := enc(b.buf)
	if err != nil {
		return err
	}
	b.buf = out
	return nil
}

// Grow makes room for n more bytes.
func (b *ObjectBuilder) Grow(n int) {
	if cap(b.buf)-len(b.buf) < n {
		nb := make([]byte, len(b.buf), len(b.buf)+n+2)
		copy(nb, b.buf)
		b.buf = nb
	}
}

// String adds a string member.
func (b *ObjectBuilder) String(k, v string) *ObjectBuilder {
	b.key(k)
	b.buf = AppendString(b.buf, v)
	return b
}

// StringOrNull adds a string member, or null when v is nil.
func (b *ObjectBuilder) StringOrNull(k string, v *string) *ObjectBuilder {
	if v == nil {
		return b.Null(k)
	}
	return b.String(k, *v)
}

// Number adds a number member.
func (b *ObjectBuilder) Number(k string, v float64) *ObjectBuilder {
	b.key(k)
	b.buf = AppendNumber(b.buf, v)
	return b
}

// Bool adds a boolean member.
func (b *ObjectBuilder) Bool(k string, v bool) *ObjectBuilder {
	b.key(k)
	if v {
		b.buf = append(b.buf, "true"...)
	} else {
		b.buf = append(b.buf, "false"...)
	}
	return b
}

// Null adds a null member.
func (b *ObjectBuilder) Null(k string) *ObjectBuilder {
	b.key(k)
	b.buf = append(b.buf, "null"...)
	return b
}

// Len returns the number of bytes written so far; before and after Raw it
// gives the offsets of a member's value.
func (b *ObjectBuilder) Len() int { return len(b.buf) }

// Bytes closes the object and returns its bytes. The builder must not be
// used afterwards.
func (b *ObjectBuilder) Bytes() []byte {
	return append(b.buf, '}')
}
