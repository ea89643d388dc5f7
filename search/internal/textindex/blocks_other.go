//go:build !unix

package textindex

const canMap = false

func mapMem(int) []byte { return nil }

func unmapMem([]byte) {}
