package jsonl

// Indent appends to dst the bytes JSON.stringify(JSON.parse(raw), null, 2)
// produces for the JSON value raw, which is how AgentUse writes its files:
// two spaces per level, `"key": value`, one member or element per line,
// empty containers as [] and {}, no trailing newline. Strings, numbers and
// member order follow the same rules as Canonical (including its one
// deliberate difference: numbers JavaScript cannot hold exactly are kept as
// written).
func Indent(dst, raw []byte) ([]byte, error) {
	compact, err := Canonical(nil, raw)
	if err != nil {
		return dst, err
	}
	return indentCompact(dst, compact), nil
}

// indentCompact lays out compact, valid JSON (no insignificant whitespace)
// with JSON.stringify's two-space indentation.
func indentCompact(dst, v []byte) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '"':
			// Copy the whole string, escapes included.
			j := i + 1
			for j < len(v) && v[j] != '"' {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			dst = append(dst, v[i:j+1]...)
			i = j
		case '{', '[':
			if i+1 < len(v) && (v[i+1] == '}' || v[i+1] == ']') {
				dst = append(dst, c, v[i+1])
				i++
				continue
			}
			dst = append(dst, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, ',')
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
