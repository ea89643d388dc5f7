package main

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or sessctl itself when a test started this
// binary as the child "sessctl" (testenv.Command) to have it as a real
// process (signals, pipes, another user), with os.Args[1:] as its
// arguments.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, map[string]func() int{
		"sessctl": func() int { main(); return exitOK },
	}))
}
