package jsonl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file holds the JSON scanner the engine uses instead of decoding whole
// lines: it validates a value exactly as JSON.parse would accept it and
// reports the byte spans of an object's members, so callers decode only the
// members they need and keep every other byte as it was read.

// ErrSyntax is the error wrapped by scanner failures: the bytes are not one
// valid JSON value.
var ErrSyntax = errors.New("invalid JSON")

// SyntaxError reports where a JSON value stopped being valid.
type SyntaxError struct {
	Offset int    // byte offset within the scanned bytes
	Msg    string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

func syntaxErr(off int, msg string) error { return &SyntaxError{Offset: off, Msg: msg} }

// strClass marks the bytes that end the fast path of a string scan: the
// closing quote, a backslash and the control characters JSON forbids.
var strClass = func() (t [256]bool) {
	for i := 0; i < 0x20; i++ {
		t[i] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipWS returns the index of the first byte at or after i that is not JSON
// whitespace.
func SkipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// SWAR constants: a word of eight copies of a byte.
const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = 0x2222222222222222 // '"'
	slashs = 0x5c5c5c5c5c5c5c5c // '\\'
	spaces = 0x2020202020202020 // ' ', the first byte allowed raw
)

// specialMask returns a mask with the high bit of a byte of w set when
// that byte is '"', '\\' or a control character (< 0x20). Only the lowest
// set bit is exact (a borrow may mark bytes above a match), which is all
// nextStop needs.
func specialMask(w uint64) uint64 {
	q := w ^ quotes
	s := w ^ slashs
	return ((q-ones)&^q | (s-ones)&^s | (w-spaces)&^w) & highs
}

// nextSpecial returns the index of the first byte at or after i that is
// '"', '\\' or a control character, or len(b). It reads sixteen bytes at a
// time and lands on the byte directly, without a byte-by-byte tail.
func nextSpecial(b []byte, i int) int { return nextStop(b, i, 0) }

// nextSpecialOrHigh is nextSpecial that also stops at bytes >= 0x80 (the
// start of a multi-byte UTF-8 sequence).
func nextSpecialOrHigh(b []byte, i int) int { return nextStop(b, i, highs) }

// nextStop is nextSpecial that also stops at bytes with a bit of high set
// (0 or highs).
func nextStop(b []byte, i int, high uint64) int {
	for i+16 <= len(b) {
		w, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		x := specialMask(w) | w&high
		y := specialMask(v) | v&high
		if x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
		if y != 0 {
			return i + 8 + bits.TrailingZeros64(y)>>3
		}
		i += 16
	}
	if i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if x := specialMask(w) | w&high; x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
		i += 8
	}
	for i < len(b) && !strClass[b[i]] && b[i]&byte(high) == 0 {
		i++
	}
	return i
}

// skipString validates the string starting at b[i] == '"' and returns the
// index just past its closing quote. esc reports whether it held escapes.
func skipString(b []byte, i int) (end int, esc bool, err error) {
	i++ // opening quote
	for {
		if useAVX2 && i+32 <= len(b) {
			// Whole blocks of 32 bytes first; the loop below goes on
			// from where they stop.
			if i = nextSpecialAVX2(b, i); i+32 <= len(b) {
				goto stop
			}
		}
		// nextSpecial's loop, inlined: the scan restarts after every
		// escape, and text averages one escape per few dozen bytes.
		for i+16 <= len(b) {
			if x := specialMask(binary.LittleEndian.Uint64(b[i:])); x != 0 {
				i += bits.TrailingZeros64(x) >> 3
				goto stop
			}
			if y := specialMask(binary.LittleEndian.Uint64(b[i+8:])); y != 0 {
				i += 8 + bits.TrailingZeros64(y)>>3
				goto stop
			}
			i += 16
		}
		i = nextSpecial(b, i)
	stop:
		if i >= len(b) {
			return 0, esc, syntaxErr(i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			if useAVX2 && !esc && len(b) >= 32 {
				// The rest of the string in 32-byte blocks, escapes
				// and all; on an error this byte scan finds it.
				if q := scanStringAVX2(b, i, false); q >= 0 {
					return q + 1, true, nil
				}
			}
			esc = true
			if i+1 >= len(b) {
				return 0, esc, syntaxErr(i, "unterminated escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, esc, syntaxErr(i, "short \\u escape")
				}
				for k := i + 2; k < i+6; k++ {
					if hexVal(b[k]) < 0 {
						return 0, esc, syntaxErr(k, "bad \\u escape")
					}
				}
				i += 6
			default:
				return 0, esc, syntaxErr(i, "bad escape")
			}
		default:
			return 0, esc, syntaxErr(i, "control character in string")
		}
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// skipNumber validates a JSON number at b[i] and returns the index past it.
func skipNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, syntaxErr(i, "bad number")
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, syntaxErr(start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, syntaxErr(i, "bad fraction")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, syntaxErr(i, "bad exponent")
		}
	}
	return i, nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, syntaxErr(i, "invalid literal")
	}
	return i + len(lit), nil
}

// SkipValue validates the JSON value that starts at b[i] (no leading
// whitespace) and returns the index just past it. Nesting depth is limited
// only by memory: containers are tracked on an explicit stack, never by
// recursion.
func SkipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, syntaxErr(i, "unexpected end of input")
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := skipString(b, i)
		return end, err
	case c == '{' || c == '[':
		return skipContainer(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return 0, syntaxErr(i, "unexpected character")
}

// skipContainer is SkipValue for objects and arrays.
func skipContainer(b []byte, i int) (int, error) {
	var stackArr [64]byte
	stack := stackArr[:0]
	var err error
	// State machine: after an opener we expect a first member/element or
	// the closer; after a value we expect ',' or the closer.
	for {
		c := b[i]
		stack = append(stack, c)
		i = SkipWS(b, i+1)
		if i >= len(b) {
			return 0, syntaxErr(i, "unexpected end of input")
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if b[i] == closer {
			i++
			stack = stack[:len(stack)-1]
			goto afterValue
		}
	member:
		if stack[len(stack)-1] == '{' {
			if b[i] != '"' {
				return 0, syntaxErr(i, "expected object key")
			}
			if i, _, err = skipString(b, i); err != nil {
				return 0, err
			}
			i = SkipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, syntaxErr(i, "expected ':'")
			}
			i = SkipWS(b, i+1)
			if i >= len(b) {
				return 0, syntaxErr(i, "unexpected end of input")
			}
		}
		// A value: containers push and restart the loop.
		if b[i] == '{' || b[i] == '[' {
			continue
		}
		if i, err = SkipValue(b, i); err != nil {
			return 0, err
		}
	afterValue:
		if len(stack) == 0 {
			return i, nil
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, syntaxErr(i, "unexpected end of input")
		}
		top := stack[len(stack)-1]
		switch {
		case b[i] == ',':
			i = SkipWS(b, i+1)
			if i >= len(b) {
				return 0, syntaxErr(i, "unexpected end of input")
			}
			goto member
		case (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']'):
			i++
			stack = stack[:len(stack)-1]
			goto afterValue
		default:
			return 0, syntaxErr(i, "expected ',' or closing bracket")
		}
	}
}

// Valid reports whether b holds exactly one JSON value, optionally
// surrounded by JSON whitespace: the same inputs JSON.parse accepts.
func Valid(b []byte) bool {
	i := SkipWS(b, 0)
	end, err := SkipValue(b, i)
	if err != nil {
		return false
	}
	return SkipWS(b, end) == len(b)
}

// Member is one member of a JSON object as found by Members.
type Member struct {
	Key      []byte // raw key bytes, without the quotes, escapes undecoded
	KeyEsc   bool   // the raw key holds escapes; use KeyString to compare
	Value    []byte // the raw value bytes
	ValStart int    // offset of Value within the scanned object
}

// KeyString returns the decoded key.
func (m *Member) KeyString() string {
	if !m.KeyEsc {
		return string(m.Key)
	}
	s, _ := decodeStringBody(m.Key)
	return s
}

// KeyIs reports whether the decoded key equals k, without allocating in the
// common case of a key without escapes.
func (m *Member) KeyIs(k string) bool {
	if !m.KeyEsc {
		return string(m.Key) == k
	}
	return m.KeyString() == k
}

// Members calls fn for each member of the JSON object obj (which must start
// with '{' after optional whitespace), in the order they appear, and
// validates the whole object. It stops early, returning nil, when fn
// returns false. Duplicate keys are reported as they occur; JSON.parse keeps
// the last value, so callers that want its view let later members win.
func Members(obj []byte, fn func(m *Member) bool) error {
	_, err := members(obj, fn)
	return err
}

// members is Members that also returns the offset just past the object's
// closing brace (or where fn stopped the walk).
func members(obj []byte, fn func(m *Member) bool) (int, error) {
	i := SkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, syntaxErr(i, "not an object")
	}
	i = SkipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1, nil
	}
	var m Member
	for {
		if i >= len(obj) || obj[i] != '"' {
			return 0, syntaxErr(i, "expected object key")
		}
		kend, esc, err := skipString(obj, i)
		if err != nil {
			return 0, err
		}
		m.Key = obj[i+1 : kend-1]
		m.KeyEsc = esc
		i = SkipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return 0, syntaxErr(i, "expected ':'")
		}
		i = SkipWS(obj, i+1)
		vend, err := SkipValue(obj, i)
		if err != nil {
			return 0, err
		}
		m.Value = obj[i:vend]
		m.ValStart = i
		if !fn(&m) {
			return vend, nil
		}
		i = SkipWS(obj, vend)
		if i >= len(obj) {
			return 0, syntaxErr(i, "unexpected end of input")
		}
		switch obj[i] {
		case ',':
			i = SkipWS(obj, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "expected ',' or '}'")
		}
	}
}

// Elements calls fn for each element of the JSON array arr, in order. It
// stops early, returning nil, when fn returns false.
func Elements(arr []byte, fn func(v []byte) bool) error {
	i := SkipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return syntaxErr(i, "not an array")
	}
	i = SkipWS(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		end, err := SkipValue(arr, i)
		if err != nil {
			return err
		}
		if !fn(arr[i:end]) {
			return nil
		}
		i = SkipWS(arr, end)
		if i >= len(arr) {
			return syntaxErr(i, "unexpected end of input")
		}
		switch arr[i] {
		case ',':
			i = SkipWS(arr, i+1)
		case ']':
			return nil
		default:
			return syntaxErr(i, "expected ',' or ']'")
		}
	}
}

// Lookup returns the raw value of the last member named key in the JSON
// object obj (JSON.parse keeps the last of duplicate keys), and whether it
// was present. obj is assumed valid; on malformed input it reports absence.
func Lookup(obj []byte, key string) ([]byte, bool) {
	var v []byte
	found := false
	err := Members(obj, func(m *Member) bool {
		if m.KeyIs(key) {
			v, found = m.Value, true
		}
		return true
	})
	if err != nil {
		return nil, false
	}
	return v, found
}

// Kind classifies a raw JSON value by its first byte.
type Kind uint8

// The kinds of JSON values. KindAbsent stands for a missing member.
const (
	KindAbsent Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// KindOf returns the kind of the raw JSON value v.
func KindOf(v []byte) Kind {
	if len(v) == 0 {
		return KindAbsent
	}
	switch v[0] {
	case 'n':
		return KindNull
	case 't', 'f':
		return KindBool
	case '"':
		return KindString
	case '[':
		return KindArray
	case '{':
		return KindObject
	}
	return KindNumber
}

// String decodes the raw JSON string v. ok is false when v is not a string.
func String(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	return decodeStringBody(v[1 : len(v)-1])
}

// stringValue is String; with alias set, a string without escapes shares
// v's memory instead of being copied, so v must never change afterwards.
func stringValue(v []byte, alias bool) (string, bool) {
	if alias && len(v) > 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if body := v[1 : len(v)-1]; bytes.IndexByte(body, '\\') < 0 {
			return unsafe.String(&body[0], len(body)), true
		}
	}
	return String(v)
}

// decodeStringBody decodes the bytes between the quotes of a valid JSON
// string. Escaped lone surrogates become U+FFFD, as Go strings cannot hold
// them.
func decodeStringBody(b []byte) (string, bool) {
	j := bytes.IndexByte(b, '\\')
	if j < 0 {
		return string(b), true
	}
	out, ok := appendStringBody(make([]byte, 0, len(b)), b, j)
	if !ok {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), true
}

// AppendDecoded appends the decoded raw JSON string v to dst, as String
// decodes it, without allocating a string of its own. ok is false, and
// dst returned as it was, when v is not a string.
func AppendDecoded(dst, v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return dst, false
	}
	b := v[1 : len(v)-1]
	j := bytes.IndexByte(b, '\\')
	if j < 0 {
		return append(dst, b...), true
	}
	out, ok := appendStringBody(dst, b, j)
	if !ok {
		return dst, false
	}
	return out, true
}

// appendStringBody appends the decoded string body b, whose first escape
// is at j, to out.
func appendStringBody(out, b []byte, j int) ([]byte, bool) {
	out = append(out, b[:j]...)
	for i := j; i < len(b); {
		c := b[i]
		if c != '\\' {
			// Copy the run up to the next escape in one go.
			k := bytes.IndexByte(b[i:], '\\')
			if k < 0 {
				k = len(b) - i
			}
			out = append(out, b[i:i+k]...)
			i += k
			continue
		}
		if i+1 >= len(b) {
			return nil, false
		}
		switch b[i+1] {
		case '"':
			out = append(out, '"')
		case '\\':
			out = append(out, '\\')
		case '/':
			out = append(out, '/')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := decodeU(b[i:])
			if n == 0 {
				return nil, false
			}
			out = utf8.AppendRune(out, r)
			i += n
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return out, true
}

// decodeU decodes a \uXXXX escape (and a following low surrogate escape when
// the first is a high surrogate). It returns the rune and the bytes used.
func decodeU(b []byte) (rune, int) {
	u1, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(rune(u1)) {
		if u1 < 0xDC00 && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if u2, ok := hex4(b[6:]); ok && u2 >= 0xDC00 && u2 <= 0xDFFF {
				return utf16.DecodeRune(rune(u1), rune(u2)), 12
			}
		}
		return utf8.RuneError, 6
	}
	return rune(u1), 6
}

func hex4(b []byte) (uint16, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var v uint16
	for _, c := range b[2:6] {
		h := hexVal(c)
		if h < 0 {
			return 0, false
		}
		v = v<<4 | uint16(h)
	}
	return v, true
}
