//go:build !linux

package search

// keepsListings reports false: elsewhere than on Linux every directory is
// read (dirCache).
func keepsListings(string) bool { return false }
