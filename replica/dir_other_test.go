//go:build !unix

package replica_test

import "testing"

// plantSpecial makes nothing where symbolic links need a privilege and
// there are no named pipes.
func plantSpecial(testing.TB, string) []string { return nil }
