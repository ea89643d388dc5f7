package layout

// ObjectBuilder writes a compact JSON object member by member, in the order
// the members are added, as JSON.stringify writes an object literal. Keys
// must not be array indices (JavaScript would move those first); the entry
// types of both formats have none.
type ObjectBuilder struct {
	buf []byte
}

// NewObject starts an object with room for about size bytes.
func NewObject(size int) *ObjectBuilder {
	b := &ObjectBuilder{buf: make([]byte, 0, size)}
	b.buf = append(b.buf, '{')
	return b
}

func (b *ObjectBuilder) key(k string) {
	if len(b.buf) > 1 {
		b.buf = append(b.buf, ',')
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
