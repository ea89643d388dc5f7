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

// OneLineName returns a name (a session's name or id, a label, an agent's
// name) for one line of a table: OneLine(s, n) when s is plain text
// (PlainText), else its first n runes quoted by Quote ("a\nb\u001b"), so
// that a newline, an escape sequence or a byte that is not UTF-8 in it
// shows as such and never reaches a pipe or a terminal raw.
func OneLineName(s string, n int) string {
	if PlainText(s) {
		return OneLine(s, n)
	}
	return Quote(CutRunes(s, n))
}

// OneLineText returns a text (a first message) for one line of a table:
// OneLine(s, n), with its whitespace folded, quoted by Quote when that is
// not plain text (an escape sequence or another control character, a
// byte that is not UTF-8).
func OneLineText(s string, n int) string {
	t := OneLine(s, n)
	if PlainText(t) {
		return t
	}
	return Quote(t)
}

// cutLast is OneLine's cut of folded text that goes on after its n
// runes: the first n-1 of them (bytes that are not UTF-8 as U+FFFD) and
// "…".
func cutLast(folded string, n int) string {
	r := []rune(folded)
	return string(r[:max(n-1, 0)]) + "…"
}

// QuotePath returns p as it can go into one line of output: unchanged
// when it is plain (PlainText), else quoted by Quote ("a\nb"), so a
// newline, an escape sequence or invalid UTF-8 in a file name can neither
// break line-oriented output nor reach the terminal.
func QuotePath(p string) string {
	if PlainText(p) {
		return p
	}
	return Quote(p)
}

// Quote returns s in double quotes, escaped the one way sessctl escapes
// text for people: \" and \\, \n and \t, every other control
// character (C0, DEL, C1) as AppendControl writes it (\u001b), and a byte
// that is not UTF-8 as \xff. The result is one line that reads back with
// strconv.Unquote, and as a JSON string when s is UTF-8.
func Quote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c < 0x20 || c == 0x7f:
				b = AppendControl(b, rune(c))
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, '\\', 'x', hexDigit[c>>4], hexDigit[c&0xf])
		case r <= 0x9f:
			b = AppendControl(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(append(b, '"'))
}

const hexDigit = "0123456789abcdef"

// AppendControl appends the escape of the control character r (C0, DEL
// or C1) to dst: \u and four lower-case hex digits, as in JSON and Go.
// It is the one way sessctl shows a control character, in quoted text
// (Quote) and in what it writes to a terminal.
func AppendControl(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigit[r>>12&0xf], hexDigit[r>>8&0xf], hexDigit[r>>4&0xf], hexDigit[r&0xf])
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

// ShellQuote quotes s for a POSIX shell when it needs it. Text that is
// not plain (PlainText: a control character or invalid UTF-8) is quoted
// by Quote instead, which no POSIX shell reads back but which keeps the
// line whole and the terminal safe: no shell quoting can print it so.
func ShellQuote(s string) string {
	if !PlainText(s) {
		return Quote(s)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:+@%=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
