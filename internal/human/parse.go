package human

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a non-negative Go duration ("90s", "2m", "1h30m").
// A bare number is refused with a hint at the units, except 0.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		if f, _ := strconv.ParseFloat(s, 64); f == 0 {
			return 0, nil
		}
		return 0, errors.New("a duration needs a unit, for example 10s, 2m or 1h")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration: use a number with a unit, for example 10s, 2m or 1h30m")
	}
	if v < 0 {
		return 0, errors.New("a duration cannot be negative")
	}
	return v, nil
}

// sizeUnits are the units ParseSize reads, longest suffix first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// ParseSize parses a size in bytes: a whole number with an optional
// binary unit ("4194304", "4M", "4MiB", "512K", "1G"; KiB, MiB and GiB
// are K, M and G).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("not a size: use a whole number of bytes, or one with a unit, for example 512K, 4M or 1G")
	}
	if n < 0 {
		return 0, errors.New("a size cannot be negative")
	}
	if n > (1<<62)/mult {
		return 0, errors.New("size too large")
	}
	return n * mult, nil
}

// FormatSize gives n in the largest unit that divides it: 4M, 512K, 10.
func FormatSize(n int64) string {
	for _, u := range sizeUnits[3:6] {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseAge parses a non-negative duration that may count days: 90d,
// 1d12h, 36h, 30m.
func ParseAge(s string) (time.Duration, error) {
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s is not an age such as 90d, 12h or 30m", Quote(s))
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, nil
		}
	}
	t, err := time.ParseDuration(s)
	if err != nil || t < 0 {
		return 0, fmt.Errorf("%s is not an age such as 90d, 12h or 30m", Quote(s))
	}
	return days + t, nil
}
