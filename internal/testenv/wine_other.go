//go:build !windows

package testenv

// isWine is false outside Windows.
func isWine() bool { return false }
