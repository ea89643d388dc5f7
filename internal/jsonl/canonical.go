package jsonl

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// canonicalDepth bounds the recursion of the canonical check; deeper
// values take Canonical's general path.
const canonicalDepth = 64

// isCanonical reports whether v, one JSON value without surrounding
// whitespace, is exactly what Canonical writes for it: no insignificant
// whitespace, strings escaped as JSON.stringify escapes them, valid UTF-8,
// numbers in Number::toString form, no repeated keys and no array-index
// keys. It allocates nothing, so Canonical can return such input as it is:
// every line pi writes passes.
func isCanonical(v []byte) bool {
	end, ok := canonValue(v, 0, 0)
	return ok && end == len(v)
}

func canonValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > canonicalDepth {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return canonString(b, i)
	case c == '{':
		return canonObject(b, i, depth, nil)
	case c == '[':
		i++
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonValue(b, i, depth+1); !ok || i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == 't':
		return i + 4, len(b)-i >= 4 && string(b[i:i+4]) == "true"
	case c == 'f':
		return i + 5, len(b)-i >= 5 && string(b[i:i+5]) == "false"
	case c == 'n':
		return i + 4, len(b)-i >= 4 && string(b[i:i+4]) == "null"
	case c == '-' || c >= '0' && c <= '9':
		end, err := skipNumber(b, i)
		if err != nil {
			return 0, false
		}
		return end, canonNumber(b[i:end])
	}
	return 0, false
}

// canonNumber reports whether a valid number literal is written as
// Number::toString writes it. Integers without fraction or exponent are
// checked without parsing.
func canonNumber(n []byte) bool {
	plain := true
	for _, c := range n {
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
			break
		}
	}
	if plain {
		digits := len(n)
		if n[0] == '-' {
			digits--
			if string(n) == "-0" {
				return false // written as 0
			}
		}
		if digits <= 15 {
			return true // exact in a double, below 1e21, no leading zeros (validated)
		}
	} else if shortDecimal(n) {
		return true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return false
	}
	var buf [32]byte
	return string(AppendNumber(buf[:0], f)) == string(n)
}

// shortDecimal reports, without parsing, whether a valid literal with a
// fraction and no exponent is written as Number::toString writes it: at
// most 15 significant digits (so no shorter decimal maps to the same
// double, and these digits are the shortest round trip), no trailing zero
// in the fraction, and a magnitude from 1e-6 up, where JavaScript does not
// switch to exponent form. "0.00036" passes; "0.50", "1e-7" and
// "0.0000001" do not.
func shortDecimal(n []byte) bool {
	if n[0] == '-' {
		n = n[1:]
	}
	dot := -1
	for i, c := range n {
		if c == '.' {
			dot = i
		} else if c < '0' || c > '9' {
			return false // an exponent
		}
	}
	if dot < 0 || n[len(n)-1] == '0' {
		return false
	}
	intPart, frac := n[:dot], n[dot+1:]
	sig := 0
	if string(intPart) == "0" {
		z := 0
		for z < len(frac) && frac[z] == '0' {
			z++
		}
		if z > 5 { // below 1e-6: exponent form
			return false
		}
		sig = len(frac) - z
	} else {
		sig = len(intPart) + len(frac)
	}
	return sig <= 15
}

// canonString checks a string starting at b[i] == '"'.
func canonString(b []byte, i int) (int, bool) {
	end, _, ok := canonStringEsc(b, i)
	return end, ok
}

// canonStringEsc is canonString that also reports whether the string
// holds an escape.
func canonStringEsc(b []byte, i int) (end int, esc, ok bool) {
	i++
	afterEsc := false
	for {
		if afterEsc && useAVX2 && len(b) >= 32 {
			// After an escape, 32-byte blocks up to the next quote,
			// byte >= 0x80 or \u escape; it fails only where the
			// string is not canonical. After a byte >= 0x80 the word
			// scan goes on: in text that is not ASCII the next one is
			// a few bytes away.
			if i = scanStringAVX2(b, i, true); i < 0 {
				return 0, esc, false
			}
			afterEsc = false
			goto stop
		}
		// nextSpecialOrHigh's loop, inlined, as in skipString.
		for i+16 <= len(b) {
			w, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
			if x := specialMask(w) | w&highs; x != 0 {
				i += bits.TrailingZeros64(x) >> 3
				goto stop
			}
			if y := specialMask(v) | v&highs; y != 0 {
				i += 8 + bits.TrailingZeros64(y)>>3
				goto stop
			}
			i += 16
		}
		i = nextSpecialOrHigh(b, i)
	stop:
		if i >= len(b) {
			return 0, esc, false
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, true
		case c < 0x20:
			return 0, esc, false
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, esc, false
			}
			afterEsc = true
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				// JSON.stringify writes \u only for control characters
				// without a short escape, and for lone surrogates.
				u, ok := hex4(b[i:])
				if !ok || hasUpperHex(b[i+2:i+6]) {
					return 0, esc, false
				}
				switch {
				case u < 0x20 && u != '\b' && u != '\f' && u != '\n' && u != '\r' && u != '\t':
				case u >= 0xD800 && u <= 0xDFFF:
					if u < 0xDC00 { // a high surrogate must not be followed by a low one
						if v, ok := hex4(b[i+6:]); ok && v >= 0xDC00 && v <= 0xDFFF {
							return 0, esc, false
						}
					} else if i >= 6 { // a low one must not follow a high one
						if v, ok := hex4(b[i-6:]); ok && v >= 0xD800 && v < 0xDC00 {
							return 0, esc, false
						}
					}
				default:
					return 0, esc, false
				}
				i += 6
			default:
				return 0, esc, false // includes \/
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, esc, false
			}
			i += size
		}
	}
}

func hasUpperHex(h []byte) bool {
	for _, c := range h {
		if c >= 'A' && c <= 'F' {
			return true
		}
	}
	return false
}

// canonObject checks an object: canonical members, no repeated keys, no
// array-index keys (JavaScript would move those first). visit, when not
// nil, is called with each member's key and the bounds of its value.
func canonObject(b []byte, i, depth int, visit func(key []byte, start, end int)) (int, bool) {
	i++
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	if len(b) > math.MaxInt32 {
		return 0, false
	}
	var keys [16][2]int32 // bounds of the keys so far, for repeats
	n := 0
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kstart := i + 1
		kend, esc, ok := canonStringEsc(b, i)
		if !ok || esc {
			return 0, false // escaped keys: let the general path decide
		}
		key := b[kstart : kend-1]
		if len(key) > 0 && key[0] >= '0' && key[0] <= '9' {
			if _, idx := arrayIndex(string(key)); idx {
				return 0, false
			}
		}
		if n >= len(keys) {
			return 0, false // large objects: the general path checks repeats
		}
		for _, k := range keys[:n] {
			if string(b[k[0]:k[1]]) == string(key) {
				return 0, false
			}
		}
		keys[n] = [2]int32{int32(kstart), int32(kend - 1)}
		n++
		i = kend
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		vstart := i + 1
		if i, ok = canonValue(b, vstart, depth+1); !ok || i >= len(b) {
			return 0, false
		}
		if visit != nil {
			visit(key, vstart, i)
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// ParseEntryCanonical is ParseEntry that also reports, from the same
// single pass over the line, whether the object is exactly what Canonical
// writes for it (true for every line pi writes). Lines that are not take
// ParseEntry's path.
func ParseEntryCanonical(line []byte) (Entry, bool, error) {
	s, end := SkipWS(line, 0), trimRightWS(line)
	if s < end && line[s] == '{' && end-s <= math.MaxInt32 {
		raw := line[s:end]
		e := Entry{Raw: raw}
		n, ok := canonObject(raw, 0, 0, func(key []byte, vs, ve int) {
			v := raw[vs:ve]
			switch string(key) {
			case "type":
				e.Type = typeName(v)
			case "id":
				e.ID, e.IDKind = envelopeKey(v)
			case "parentId":
				e.ParentID, e.ParentKind = envelopeKey(v)
			case "timestamp":
				e.Timestamp, _ = String(v)
			case "message":
				if v[0] == '{' {
					e.msgStart, e.msgEnd = int32(vs), int32(ve)
					e.Role = canonicalRole(v)
				}
			}
		})
		if ok && n == len(raw) {
			return e, true, nil
		}
	}
	e, err := ParseEntry(line)
	return e, false, err
}
