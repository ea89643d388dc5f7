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
