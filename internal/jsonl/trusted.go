package jsonl

import "bytes"

// MembersTrusted is Members for bytes already known to be valid JSON, such
// as a cache file whose checksum matched: it finds the members without
// validating them (strings end at the first quote not escaped, containers
// are matched by counting brackets outside strings), several times faster.
// On bytes that are not valid JSON it never panics and never loops; it
// returns an error or wrong spans. The input may stop after any member
// (the closing brace is optional), so a caller can cut an object short.
func MembersTrusted(obj []byte, fn func(key, val []byte) bool) error {
	i := SkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return syntaxErr(i, "not an object")
	}
	i = SkipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return syntaxErr(i, "expected object key")
		}
		kend := trustedStringEnd(obj, i)
		if kend < 0 {
			return syntaxErr(i, "unterminated string")
		}
		key := obj[i+1 : kend-1]
		i = SkipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return syntaxErr(i, "expected ':'")
		}
		i = SkipWS(obj, i+1)
		vend := trustedSkip(obj, i)
		if vend < 0 {
			return syntaxErr(i, "bad value")
		}
		if !fn(key, obj[i:vend]) {
			return nil
		}
		i = SkipWS(obj, vend)
		if i >= len(obj) {
			return nil // cut short after a member
		}
		switch obj[i] {
		case ',':
			i = SkipWS(obj, i+1)
		case '}':
			return nil
		default:
			return syntaxErr(i, "expected ',' or '}'")
		}
	}
}

// trustedStringEnd returns the index past the closing quote of the string
// at b[i], or -1.
func trustedStringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return -1
}

// trustedSkip returns the index past the value at b[i], or -1.
func trustedSkip(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return trustedStringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = trustedStringEnd(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isWS(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// ElementsTrusted is Elements for bytes already known to be valid JSON
// (see MembersTrusted).
func ElementsTrusted(arr []byte, fn func(v []byte) bool) error {
	i := SkipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return syntaxErr(i, "not an array")
	}
	i = SkipWS(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		end := trustedSkip(arr, i)
		if end < 0 {
			return syntaxErr(i, "bad value")
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

// LookupTrusted is Lookup for bytes already known to be valid JSON (see
// MembersTrusted): the raw value of the last member named key, found
// without validating the members before it again.
func LookupTrusted(obj []byte, key string) ([]byte, bool) {
	var v []byte
	found := false
	_ = MembersTrusted(obj, func(k, val []byte) bool {
		if string(k) == key || bytes.IndexByte(k, '\\') >= 0 && trustedKey(k) == key {
			v, found = val, true
		}
		return true
	})
	return v, found
}

// trustedKey decodes a raw key with escapes (without its quotes).
func trustedKey(k []byte) string {
	s, _ := String(append(append([]byte{'"'}, k...), '"'))
	return s
}

// IndentTrusted appends to dst what encoding/json's Indent appends for
// src, which must be valid JSON (see MembersTrusted): each element and
// member on a new line starting with prefix and one indent per level,
// `"key": value`, empty containers as [] and {}, strings and numbers as
// they are; whitespace around the value's tokens is dropped, except
// after the last, which is kept. It finds the strings' ends without
// validating them, several times faster than encoding/json.
func IndentTrusted(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	needIndent := false // an opening was written: indent before what follows, unless it closes
	newline := func(d int) {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range d {
			dst = append(dst, indent...)
		}
	}
	i := SkipWS(src, 0)
	end := len(src)
	for end > i && isWS(src[end-1]) {
		end--
	}
	for i < end {
		c := src[i]
		if isWS(c) {
			i++
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			newline(depth)
		}
		switch c {
		case '"':
			j := trustedStringEnd(src, i)
			if j < 0 {
				j = end
			}
			dst = append(dst, src[i:j]...)
			i = j
			continue
		case '{', '[':
			dst = append(dst, c)
			depth++
			needIndent = true
		case '}', ']':
			depth--
			if needIndent {
				needIndent = false // an empty container stays [] or {}
			} else {
				newline(depth)
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, ',')
			newline(depth)
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, src[end:]...)
}
