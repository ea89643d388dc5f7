package main

import "os"

// Tests that need sessctl as a real process (signals, process groups)
// re-run this test binary with SESSCTL_TEST_MAIN=1: it then is sessctl,
// with os.Args[1:] as its arguments.
func init() {
	if os.Getenv("SESSCTL_TEST_MAIN") == "1" {
		main()
	}
}
