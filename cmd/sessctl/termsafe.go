package main

import (
	"strconv"
	"unicode/utf8"
)

// quotePath returns p as it can go into one line of output: unchanged
// when it is plain, else Go-quoted ("a\nb"), so a newline, an escape
// sequence or invalid UTF-8 in a file name can neither break
// line-oriented output nor reach the terminal.
func quotePath(p string) string {
	if plainText(p) {
		return p
	}
	return strconv.Quote(p)
}

// plainText reports whether s is valid UTF-8 without control characters
// (C0, DEL, C1) and does not start with a double quote, so that it reads
// back unambiguously next to quoted text.
func plainText(s string) bool {
	if len(s) > 0 && s[0] == '"' {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r >= 0x80 && r <= 0x9f {
			return false
		}
		i += n
	}
	return true
}
