//go:build !linux

package vfs

// lstatNamesOS reports false: LstatNames stats each path.
func lstatNamesOS(string, []string, func(int, Attr, error)) bool { return false }
