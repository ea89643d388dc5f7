//go:build !unix

package main

// ownerHint gives no hint: files here have no Unix owner.
func ownerHint(error) string { return "" }
