package main

import (
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/human"
)

// Flag values shared by the commands, so every --wait, --summary-timeout
// and token count is parsed and explained the same way.

// durationValue is a flag.Value for a duration that must not be negative
// and must carry a unit: "10" is refused with a hint instead of the flag
// package's bare "parse error".
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := human.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
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

func (v *sizeValue) String() string { return human.FormatSize(int64(*v)) }

func (v *sizeValue) Set(s string) error {
	n, err := human.ParseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

// sizeFlag defines a size flag (see sizeValue).
func sizeFlag(fs *flag.FlagSet, name string, value int64, usage string) *int64 {
	p := new(int64)
	*p = value
	fs.Var((*sizeValue)(p), name, usage)
	return p
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}
