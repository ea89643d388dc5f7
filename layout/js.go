package layout

import (
	"strconv"
	"strings"
	"time"
)

// The few pieces of JavaScript the names of files follow, here so that
// layout needs nothing but the standard library (the codec has the same;
// js_test.go holds the two to each other).

// isJSWhitespace reports whether r is white space to JavaScript's
// String.prototype.trim (WhiteSpace and LineTerminator of ECMA-262).
func isJSWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSWhitespace) }

// isoTime is JavaScript's Date.prototype.toISOString of t, to the
// millisecond: YYYY-MM-DDTHH:MM:SS.mmmZ, with a signed six-digit year
// outside years 0 to 9999.
func isoTime(t time.Time) string {
	t = time.UnixMilli(t.UnixMilli()).UTC()
	rest := t.Format("-01-02T15:04:05.000Z")
	switch y := t.Year(); {
	case y >= 0 && y <= 9999:
		return pad(y, 4) + rest
	case y < 0:
		return "-" + pad(-y, 6) + rest
	default:
		return "+" + pad(y, 6) + rest
	}
}

func pad(n, w int) string {
	s := strconv.Itoa(n)
	for len(s) < w {
		s = "0" + s
	}
	return s
}
