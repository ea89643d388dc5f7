package jsonl

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file is the write side of the line codec: it produces the bytes
// JavaScript's JSON.stringify produces, so that files written by sessctl
// are byte-identical to files written by pi and AgentUse.
//
// The rules, from ECMA-262 and checked against Node:
//   - strings: only '"', '\\' and C0 controls are escaped ('\b', '\f',
//     '\n', '\r', '\t', otherwise \u00xx in lower-case hex); '<', '>', '&',
//     U+2028, U+2029 and all other characters are written raw;
//   - numbers: Number::toString (shortest round trip, exponent form below
//     1e-6 and from 1e21), -0 as 0, non-finite values as null;
//   - objects: members in property order, which puts array-index keys
//     ("0", "1", "42") first in ascending numeric order, then the other
//     keys in insertion order; a duplicate key keeps the position of its
//     first occurrence and the value of its last.

// AppendString appends s to dst as JSON.stringify would write it. Bytes
// that are not valid UTF-8 are written as U+FFFD, which is what reading the
// file as UTF-8 text gives in JavaScript.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s as JSON.stringify writes it between the quotes.
func AppendEscaped(dst []byte, s string) []byte {
	// Viewed as bytes (never written) for the word-at-a-time scan.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	start := 0
	for i := 0; i < len(s); {
		// Up to the next byte that needs an escape or is not ASCII.
		i = nextSpecialOrHigh(b, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := decodeRuneJS(b[i:])
			if r == utf8.RuneError && !validFFFD(b[i:]) {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscapedASCII(dst, c)
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendEscapedToken appends the value of the JSON string token tok
// (quotes included) as JSON.stringify writes it between the quotes. A
// token already in that form, as every string JSON.stringify wrote is, is
// copied without being decoded; a lone surrogate escape survives as it is,
// as it does in JavaScript. A tok that is not a string appends nothing.
func AppendEscapedToken(dst, tok []byte) []byte {
	if len(tok) < 2 || tok[0] != '"' {
		return dst
	}
	if end, ok := canonString(tok, 0); ok && end == len(tok) {
		return append(dst, tok[1:len(tok)-1]...)
	}
	n := len(dst)
	out, err := Canonical(dst, tok)
	if err != nil || len(out) < n+2 {
		return dst
	}
	// Drop the quotes Canonical wrote around the value.
	copy(out[n:], out[n+1:len(out)-1])
	return out[:len(out)-2]
}

// AppendJSText appends String(v) for the JSON value v, as a JavaScript
// template literal renders it: strings as they are, numbers in JavaScript
// notation, null, true and false by name, objects as "[object Object]",
// arrays as their elements joined by commas (null elements empty), and a
// missing value (nil) as "undefined".
func AppendJSText(dst, v []byte) []byte {
	switch KindOf(v) {
	case KindAbsent:
		return append(dst, "undefined"...)
	case KindString:
		s, _ := String(v)
		return append(dst, s...)
	case KindNumber:
		f, _ := Number(v)
		return AppendNumber(dst, f)
	case KindObject:
		return append(dst, "[object Object]"...)
	case KindArray:
		n := 0
		_ = Elements(v, func(e []byte) bool {
			if n++; n > 1 {
				dst = append(dst, ',')
			}
			if KindOf(e) != KindNull {
				dst = AppendJSText(dst, e)
			}
			return true
		})
		return dst
	}
	return append(dst, v...) // null, true, false
}

func appendEscapedASCII(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
}

// AppendNumber appends f formatted as JavaScript's Number::toString, which
// is what JSON.stringify writes for numbers. NaN and infinities are written
// as null, as JSON.stringify does.
func AppendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	if out, ok := appendShortDecimal(dst, f); ok {
		return out
	}
	return appendShortest(dst, f)
}

// appendShortest is AppendNumber of a positive finite f, from its
// shortest round-trip digits.
func appendShortest(dst []byte, f float64) []byte {
	// Shortest round-trip digits and decimal exponent: value = 0.d1d2... * 10^n.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±xx
	mant := e
	exp := 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, 20)
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k := len(digits)
	n := exp + 1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for i := 0; i < n-k; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// pow10 holds the powers of ten a double holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// appendShortDecimal appends a positive f that is m/10^k for an integer m
// of at most 15 digits, the smallest such k, from 1e-6 up (the values of
// costs and token counts), without the shortest-digits search: m/10^k is
// then the shortest decimal that reads back as f (with at most 15 digits,
// a step of one in m is more than four units in the last place of f, so
// no other decimal of k places reads back as f, and none of fewer places
// does, k being the smallest), which Number::toString writes without an
// exponent from 1e-6 to 1e21. It reports false for any other value.
func appendShortDecimal(dst []byte, f float64) ([]byte, bool) {
	if f < 1e-6 || f >= 1e15 {
		return dst, false
	}
	for k := 0; k <= 21; k++ {
		p := pow10[k]
		m := math.Round(f * p)
		if m >= 1e15 {
			return dst, false
		}
		if m/p != f { // both exact, the quotient correctly rounded: m/10^k reads as f
			continue
		}
		start := len(dst)
		dst = strconv.AppendUint(dst, uint64(m), 10)
		if k == 0 {
			return dst, true
		}
		digits := len(dst) - start
		if digits <= k { // 0.000ddd: room for "0." and the zeros
			zeros := k - digits + 2
			dst = append(dst, make([]byte, zeros)...)
			copy(dst[start+zeros:], dst[start:start+digits])
			dst[start], dst[start+1] = '0', '.'
			for i := start + 2; i < start+zeros; i++ {
				dst[i] = '0'
			}
			return dst, true
		}
		// ddd.ddd
		dst = append(dst, 0)
		point := len(dst) - 1 - k
		copy(dst[point+1:], dst[point:len(dst)-1])
		dst[point] = '.'
		return dst, true
	}
	return dst, false
}

// Canonical appends to dst the bytes JSON.stringify(JSON.parse(raw)) would
// produce for the JSON value raw, with one deliberate difference: a number
// whose value JavaScript cannot hold exactly (an integer beyond 2^53, more
// digits than a double keeps) is written as it was read instead of rounded,
// so that a rewrite never changes a value. Only the notation of numbers is
// normalised (1.0 -> 1, 1e2 -> 100).
func Canonical(dst, raw []byte) ([]byte, error) {
	i := SkipWS(raw, 0)
	if j := trimRightWS(raw); i < j && isCanonical(raw[i:j]) {
		// Valid and already canonical: one pass, no decoding.
		return append(dst, raw[i:j]...), nil
	}
	end, err := SkipValue(raw, i)
	if err != nil {
		return dst, err
	}
	if SkipWS(raw, end) != len(raw) {
		return dst, syntaxErr(end, "trailing data after value")
	}
	return appendCanonical(dst, raw[i:end]), nil
}

func trimRightWS(b []byte) int {
	j := len(b)
	for j > 0 && isWS(b[j-1]) {
		j--
	}
	return j
}

// IsCanonical reports whether raw is already exactly what Canonical would
// produce, which is true of every line pi writes. It allocates nothing.
func IsCanonical(raw []byte) bool {
	if isCanonical(raw) {
		return true
	}
	// Large objects, escaped keys and deep nesting take the general path.
	out, err := Canonical(nil, raw)
	return err == nil && string(out) == string(raw)
}

// appendCanonical handles one valid value without surrounding whitespace.
// It recurses per nesting level; callers of deeply nested input go through
// Canonical's validation first, and depth is bounded by maxCanonicalDepth.
func appendCanonical(dst, v []byte) []byte {
	return appendCanonicalDepth(dst, v, 0)
}

// maxCanonicalDepth bounds recursion in appendCanonicalDepth. Deeper values
// are copied in compact form without number or key normalisation, which
// keeps their meaning and cannot exhaust the stack.
const maxCanonicalDepth = 256

func appendCanonicalDepth(dst, v []byte, depth int) []byte {
	switch KindOf(v) {
	case KindString:
		return appendCanonicalString(dst, v)
	case KindNumber:
		return appendCanonicalNumber(dst, v)
	case KindNull, KindBool:
		return append(dst, v...)
	case KindArray:
		if depth >= maxCanonicalDepth {
			return appendCompact(dst, v)
		}
		dst = append(dst, '[')
		first := true
		_ = Elements(v, func(e []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendCanonicalDepth(dst, e, depth+1)
			return true
		})
		return append(dst, ']')
	case KindObject:
		if depth >= maxCanonicalDepth {
			return appendCompact(dst, v)
		}
		type mem struct {
			key string
			val []byte
		}
		var mems []mem
		var index map[string]int
		var tok []byte
		_ = Members(v, func(m *Member) bool {
			// A key is known by its canonical form, which maps one to one
			// to JavaScript strings: keys JavaScript reads as the same text
			// are one key, and a lone surrogate escape survives.
			tok = append(append(append(tok[:0], '"'), m.Key...), '"')
			k := string(appendCanonicalString(nil, tok))
			if index == nil && len(mems) >= 8 {
				index = make(map[string]int, 16)
				for i, x := range mems {
					index[x.key] = i
				}
			}
			pos := -1
			if index != nil {
				if p, ok := index[k]; ok {
					pos = p
				}
			} else {
				for i := range mems {
					if mems[i].key == k {
						pos = i
						break
					}
				}
			}
			if pos >= 0 {
				mems[pos].val = m.Value
				return true
			}
			if index != nil {
				index[k] = len(mems)
			}
			mems = append(mems, mem{k, m.Value})
			return true
		})
		// Array-index keys first, ascending; stable for the rest.
		hasIndex := false
		for _, m := range mems {
			if _, ok := arrayIndex(unquote(m.key)); ok {
				hasIndex = true
				break
			}
		}
		if hasIndex {
			slices.SortStableFunc(mems, func(a, b mem) int {
				ai, aok := arrayIndex(unquote(a.key))
				bi, bok := arrayIndex(unquote(b.key))
				switch {
				case aok && bok:
					if ai < bi {
						return -1
					} else if ai > bi {
						return 1
					}
					return 0
				case aok:
					return -1
				case bok:
					return 1
				}
				return 0
			})
		}
		dst = append(dst, '{')
		for i, m := range mems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.key...)
			dst = append(dst, ':')
			dst = appendCanonicalDepth(dst, m.val, depth+1)
		}
		return append(dst, '}')
	}
	return append(dst, v...)
}

// appendCanonicalString re-encodes the valid JSON string v as
// JSON.stringify would write the parsed string. It works on the raw bytes so
// that escaped lone surrogates, which a Go string cannot hold, survive as
// the \udxxx escapes JavaScript writes for them.
func appendCanonicalString(dst, v []byte) []byte {
	body := v[1 : len(v)-1]
	dst = append(dst, '"')
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			switch body[i+1] {
			case 'u':
				u, _ := hex4(body[i:])
				if utf16IsSurrogate(u) {
					if r, n := decodeU(body[i:]); n == 12 {
						dst = utf8.AppendRune(dst, r)
						i += 12
						continue
					}
					const hex = "0123456789abcdef"
					dst = append(dst, '\\', 'u', hex[u>>12], hex[u>>8&0xF], hex[u>>4&0xF], hex[u&0xF])
					i += 6
					continue
				}
				if u < 0x80 {
					if u < 0x20 || u == '"' || u == '\\' {
						dst = appendEscapedASCII(dst, byte(u))
					} else {
						dst = append(dst, byte(u))
					}
				} else {
					dst = utf8.AppendRune(dst, rune(u))
				}
				i += 6
				continue
			case '/':
				dst = append(dst, '/')
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			default: // b f n r t stay as they are
				dst = append(dst, '\\', body[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := decodeRuneJS(body[i:])
			if r == utf8.RuneError && !validFFFD(body[i:]) {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, body[i:i+n]...)
			}
			i += n
		}
	}
	return append(dst, '"')
}

// unquote strips the quotes of a canonical key. Array-index keys are plain
// digits, so the escaped form can be tested as it is.
func unquote(k string) string { return k[1 : len(k)-1] }

// decodeRuneJS is utf8.DecodeRune, except that an invalid sequence is
// consumed as the WHATWG decoder (and so Node, reading a file as UTF-8)
// consumes it: the longest prefix of a valid sequence (a maximal subpart)
// is one U+FFFD, where Go would count one per byte. The size of an invalid
// sequence is 1 to 3.
func decodeRuneJS(b []byte) (rune, int) {
	r, n := utf8.DecodeRune(b)
	if r != utf8.RuneError || n != 1 {
		return r, n
	}
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return utf8.RuneError, 1
	}
	i := 1
	for ; i <= need && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return utf8.RuneError, i
}

// IsJSWhitespace reports whether JavaScript's String.prototype.trim
// removes r: WhiteSpace and LineTerminator of ECMA-262.
func IsJSWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// JSTrim is JavaScript's String.prototype.trim.
func JSTrim(s string) string { return strings.TrimFunc(s, IsJSWhitespace) }

// UTF16Len returns what JavaScript's string.length gives for s read as
// UTF-8 text: characters outside the Basic Multilingual Plane (most emoji)
// count 2, and each invalid sequence, one U+FFFD (see decodeRuneJS), 1.
func UTF16Len(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	n := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := decodeRuneJS(b[i:])
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// validFFFD reports whether b starts with a real, encoded U+FFFD.
func validFFFD(b []byte) bool {
	return len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBF && b[2] == 0xBD
}

func utf16IsSurrogate(u uint16) bool { return u >= 0xD800 && u <= 0xDFFF }

// appendCompact copies a valid value dropping insignificant whitespace.
func appendCompact(dst, v []byte) []byte {
	in := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if in {
			dst = append(dst, c)
			if c == '\\' && i+1 < len(v) {
				i++
				dst = append(dst, v[i])
			} else if c == '"' {
				in = false
			}
			continue
		}
		if isWS(c) {
			continue
		}
		if c == '"' {
			in = true
		}
		dst = append(dst, c)
	}
	return dst
}

// arrayIndex reports whether k is a canonical array index ("0", or digits
// without a leading zero, below 2^32-1), which JavaScript orders first.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// appendCanonicalNumber writes the raw number literal v in JavaScript's
// notation when that denotes the same decimal value, and as read otherwise.
func appendCanonicalNumber(dst, v []byte) []byte {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil { // out of range: keep the literal
		return append(dst, v...)
	}
	var buf [40]byte
	js := AppendNumber(buf[:0], f)
	if sameDecimal(v, js) {
		return append(dst, js...)
	}
	return append(dst, v...)
}

// sameDecimal reports whether two valid JSON number literals denote the
// same decimal value, zero of either sign being equal.
func sameDecimal(a, b []byte) bool {
	an, ad, ae := normDecimal(a)
	bn, bd, be := normDecimal(b)
	if ad == "" || bd == "" {
		return ad == bd
	}
	return an == bn && ad == bd && ae == be
}

// normDecimal splits a number literal into sign, significant digits (no
// leading or trailing zeros) and the exponent of the last digit.
func normDecimal(v []byte) (neg bool, digits string, exp int) {
	i := 0
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	var d []byte
	fracDigits := 0
	inFrac := false
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			d = append(d, c)
			if inFrac {
				fracDigits++
			}
		case c == '.':
			inFrac = true
		case c == 'e' || c == 'E':
			e, _ := strconv.Atoi(string(v[i+1:]))
			exp = e
			i = len(v)
		}
	}
	exp -= fracDigits
	// Strip leading zeros.
	k := 0
	for k < len(d) && d[k] == '0' {
		k++
	}
	d = d[k:]
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
		exp++
	}
	if len(d) == 0 {
		return false, "", 0
	}
	return neg, string(d), exp
}

// Marshal returns the JSON.stringify bytes of v. json.RawMessage and []byte
// values are taken as JSON text; anything else goes through encoding/json
// first. The result is always canonical (see Canonical).
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends Marshal(v) to dst: JSON text and strings straight
// into dst, any other value through encoding/json and then Canonical
// (which also undoes encoding/json's escaping of <, > and &).
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	case string:
		return AppendString(dst, x), nil
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return dst, fmt.Errorf("encode value: %w", err)
		}
	}
	out, err := Canonical(dst, raw)
	if err != nil {
		return dst, fmt.Errorf("encode value: %w", err)
	}
	return out, nil
}
