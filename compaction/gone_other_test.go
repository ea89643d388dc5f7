//go:build !unix

package compaction

import "testing"

// waitGone does nothing where the tests cannot see processes; the tests
// that start programs need a POSIX shell and skip there.
func waitGone(*testing.T, string) {}
