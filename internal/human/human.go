package human

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plural returns "1 <one>" or "<n> <many>".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// CutRunes shortens s to n runes, marking the cut with "...". It looks at
// no more of s than it needs.
func CutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count, cut := 0, 0
	for i := range s {
		if count == n-3 {
			cut = i
		}
		if count == n {
			return s[:cut] + "..."
		}
		count++
	}
	return s
}

// OneLine folds whitespace and cuts s to n runes, marking the cut with
// "…". It reads s only up to the rune after the n-th: a listing shows 60
// runes of first messages that run to kilobytes.
func OneLine(s string, n int) string {
	var b strings.Builder
	count := 0 // runes in b; a byte that is not UTF-8 counts as one
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		// A field starts at i: a space before it, then its runes.
		if count > 0 {
			if count == n {
				return cutLast(b.String(), n)
			}
			b.WriteByte(' ')
			count++
		}
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			if count == n {
				return cutLast(b.String(), n)
			}
			b.WriteString(s[i : i+size])
			count++
			i += size
		}
	}
	return b.String()
}

// cutLast is OneLine's cut of folded text that goes on after its n
// runes: the first n-1 of them (bytes that are not UTF-8 as U+FFFD) and
// "…".
func cutLast(folded string, n int) string {
	r := []rune(folded)
	return string(r[:max(n-1, 0)]) + "…"
}

// QuotePath returns p as it can go into one line of output: unchanged
// when it is plain, else Go-quoted ("a\nb"), so a newline, an escape
// sequence or invalid UTF-8 in a file name can neither break
// line-oriented output nor reach the terminal.
func QuotePath(p string) string {
	if PlainText(p) {
		return p
	}
	return strconv.Quote(p)
}

// PlainText reports whether s is valid UTF-8 without control characters
// (C0, DEL, C1) and does not start with a double quote, so that it reads
// back unambiguously next to quoted text.
func PlainText(s string) bool {
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

// Bytes formats a size: "512 B", "1.5 KB", "2.0 MB".
func Bytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// Cost formats a dollar amount with six decimals: "$0.000960".
func Cost(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 6, 64) }

// Or returns a, or b when a is empty.
func Or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:+@%=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
