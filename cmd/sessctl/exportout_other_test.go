//go:build !unix

package main

import "testing"

// specialTargets has no cases where named pipes cannot be made.
func specialTargets(*testing.T, string) []struct {
	name    string
	target  func() string
	force   bool
	code    int
	wantErr string
} {
	return nil
}
