package main

import (
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"
)

// Flag values shared by the commands, so every --wait, --summary-timeout
// and token count is parsed and explained the same way.

// durationValue is a flag.Value for a duration that must not be negative
// and must carry a unit: "10" is refused with a hint instead of the flag
// package's bare "parse error".
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// parseDuration parses a non-negative Go duration ("90s", "2m", "1h30m").
// A bare number is refused with a hint at the units, except 0.
func parseDuration(s string) (time.Duration, error) {
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

// durationFlag defines a non-negative duration flag (see durationValue).
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Var((*durationValue)(p), name, usage)
	return p
}

// countValue is a flag.Value for an optional count: 0 or more, or unset.
// Unset, its help shows no default (the usage text says what applies).
type countValue struct {
	n   int
	set bool
}

func (c *countValue) String() string {
	if c == nil || !c.set {
		return ""
	}
	return strconv.Itoa(c.n)
}

func (c *countValue) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < 0 {
		return errors.New("must be 0 or more")
	}
	c.n, c.set = int(n), true
	return nil
}

// countFlag defines an optional count flag (see countValue).
func countFlag(fs *flag.FlagSet, name, usage string) *countValue {
	c := new(countValue)
	fs.Var(c, name, usage)
	return c
}

// sizeValue is a flag.Value for a size in bytes: a whole number with an
// optional binary unit (512K, 4M, 1G; KiB, MiB and GiB are the same).
type sizeValue int64

func (v *sizeValue) String() string { return formatSize(int64(*v)) }

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// parseSize parses "4194304", "4M", "4MiB", "512K", "1G".
func parseSize(s string) (int64, error) {
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

// formatSize gives n in the largest unit that divides it: 4M, 512K, 10.
func formatSize(n int64) string {
	for _, u := range sizeUnits[3:6] {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// sizeFlag defines a size flag (see sizeValue).
func sizeFlag(fs *flag.FlagSet, name string, value int64, usage string) *int64 {
	p := new(int64)
	*p = value
	fs.Var((*sizeValue)(p), name, usage)
	return p
}
