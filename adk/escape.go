package adk

import (
	"fmt"
	"strings"
)

// escapeName turns an app name or a user id into one path element that
// names it on every file system sessctl runs on: lower-case letters,
// digits, '-' and '_' stay, every other byte (upper-case letters too, for
// the file systems that fold case, and '.', so that "." and ".." cannot
// occur) becomes %XX. It is reversible (unescapeName) and injective.
func escapeName(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

// unescapeName reverses escapeName.
func unescapeName(s string) (string, error) {
	if s == "%" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("unescape %q: truncated escape", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("unescape %q: bad escape at byte %d", s, i)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// checkSessionID refuses a session id that cannot be part of a session
// file's name (<timestamp>_<id>.jsonl) as it is: the file names the
// session by its id, so that pi, sessctl show and the CLI find it.
func checkSessionID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("session id %q: must be 1 to 128 bytes", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0 {
			continue
		}
		return fmt.Errorf("session id %q: byte %d (%q) is not a letter, digit, '-', '_' or '.'", id, i, c)
	}
	return nil
}
