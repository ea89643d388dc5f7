package jsonl

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// ISOTime formats t as JavaScript's Date.prototype.toISOString does: UTC,
// millisecond precision, "Z" suffix, and the six-digit signed year form
// outside years 0 to 9999.
func ISOTime(t time.Time) string {
	ms := t.UnixMilli()
	if ms >= 0 && ms < 253402300800000 { // years 1970 to 9999: the common case, formatted by hand
		return string(appendISO(make([]byte, 0, 24), ms))
	}
	return FormatISOMillis(ms)
}

// appendISO writes YYYY-MM-DDTHH:MM:SS.mmmZ for a time in years 0 to 9999.
func appendISO(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = two(b, int(mo))
	b = append(b, '-')
	b = two(b, d)
	b = append(b, 'T')
	b = two(b, h)
	b = append(b, ':')
	b = two(b, mi)
	b = append(b, ':')
	b = two(b, s)
	m := int(ms % 1000)
	return append(b, '.', byte('0'+m/100), byte('0'+m/10%10), byte('0'+m%10), 'Z')
}

// FormatISOMillis formats epoch milliseconds like toISOString.
func FormatISOMillis(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	y := t.Year()
	var b strings.Builder
	switch {
	case y >= 0 && y <= 9999:
		b.WriteString(pad(y, 4))
	case y < 0:
		b.WriteString("-" + pad(-y, 6))
	default:
		b.WriteString("+" + pad(y, 6))
	}
	b.WriteString(t.Format("-01-02T15:04:05.000Z"))
	return b.String()
}

func pad(n, w int) string {
	s := strconv.Itoa(n)
	for len(s) < w {
		s = "0" + s
	}
	return s
}

// maxDateMs is the largest magnitude a JavaScript Date can hold.
const maxDateMs = 8.64e15

// ParseDate returns the epoch milliseconds JavaScript's Date.parse gives for
// s, and false where Date.parse gives NaN. It implements the ISO 8601 forms
// of ECMA-262 (date-only forms are UTC, date-time forms without an offset are
// local time) and the common RFC 1123 / RFC 850 / ANSI C forms V8 also
// accepts.
func ParseDate(s string) (float64, bool) {
	if ms, ok := parseISODate(s); ok {
		return ms, true
	}
	// Every other accepted form is longer than 8 bytes and holds a digit.
	if len(s) < 8 || !strings.ContainsAny(s, "0123456789") {
		return math.NaN(), false
	}
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC, time.UnixDate,
		"Mon Jan 02 2006 15:04:05 GMT-0700", "Jan 2, 2006", "January 2, 2006", "2006/01/02", "2006/01/02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.UnixMilli()), true
		}
	}
	return math.NaN(), false
}

// parseISODate parses the Date Time String Format of ECMA-262 21.4.1.32.
func parseISODate(s string) (float64, bool) {
	i := 0
	num := func(n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for k := 0; k < n; k++ {
			c := s[i+k]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		i += n
		return v, true
	}
	var year int
	var ok bool
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg := s[i] == '-'
		i++
		if year, ok = num(6); !ok {
			return 0, false
		}
		if neg {
			if year == 0 {
				return 0, false // -000000 is not allowed
			}
			year = -year
		}
	} else if year, ok = num(4); !ok {
		return 0, false
	}
	month, day := 1, 1
	if i < len(s) && s[i] == '-' {
		i++
		if month, ok = num(2); !ok || month < 1 || month > 12 {
			return 0, false
		}
		if i < len(s) && s[i] == '-' {
			i++
			if day, ok = num(2); !ok || day < 1 || day > 31 {
				return 0, false
			}
		}
	}
	hour, minute, sec, ms := 0, 0, 0, 0
	local := false
	if i < len(s) && s[i] == 'T' {
		i++
		if hour, ok = num(2); !ok || hour > 24 {
			return 0, false
		}
		if i >= len(s) || s[i] != ':' {
			return 0, false
		}
		i++
		if minute, ok = num(2); !ok || minute > 59 {
			return 0, false
		}
		if i < len(s) && s[i] == ':' {
			i++
			if sec, ok = num(2); !ok || sec > 59 {
				return 0, false
			}
			if i < len(s) && s[i] == '.' {
				i++
				start := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				if i == start {
					return 0, false
				}
				frac := s[start:i]
				for len(frac) < 3 {
					frac += "0"
				}
				ms, _ = strconv.Atoi(frac[:3])
			}
		}
		if hour == 24 && (minute != 0 || sec != 0 || ms != 0) {
			return 0, false
		}
		local = true
	}
	offMin := 0
	if i < len(s) {
		switch s[i] {
		case 'Z':
			i++
			local = false
		case '+', '-':
			if !local {
				return 0, false // an offset needs a time
			}
			sign := 1
			if s[i] == '-' {
				sign = -1
			}
			i++
			oh, ok1 := num(2)
			if !ok1 || i >= len(s) || s[i] != ':' {
				return 0, false
			}
			i++
			om, ok2 := num(2)
			if !ok2 || oh > 23 || om > 59 {
				return 0, false
			}
			offMin = sign * (oh*60 + om)
			local = false
		default:
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	// Day overflow (Feb 30) is NaN in V8 for the ISO format.
	if day > daysIn(year, month) {
		return 0, false
	}
	loc := time.UTC
	if local {
		loc = time.Local
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), loc)
	v := float64(t.UnixMilli()) - float64(offMin)*60000
	if math.Abs(v) > maxDateMs {
		return 0, false
	}
	return v, true
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func parseNumber(v []byte) float64 {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// Number decodes the raw JSON number v. ok is false when v is not a number.
func Number(v []byte) (float64, bool) {
	if KindOf(v) != KindNumber {
		return 0, false
	}
	if f, ok := smallInteger(v); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		// Out of range literals are infinities in JavaScript.
		if len(v) > 0 && v[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	return f, true
}

// smallInteger is Number for an integer of 1 to 15 digits with an optional
// minus sign, the form of every millisecond timestamp: such a value is
// exact in a float64, so it needs no decimal conversion. ok is false for
// any other text, which ParseFloat then reads.
func smallInteger(v []byte) (float64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	d := v
	if neg {
		d = v[1:]
	}
	if len(d) == 0 || len(d) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	f := float64(n)
	if neg {
		f = -f // -0 stays negative zero, as ParseFloat reads it
	}
	return f, true
}
