package engine

import (
	"crypto/rand"
	"encoding/hex"
)

// NewUUID returns a random lower-case version 4 UUID, like
// crypto.randomUUID().
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// entryID draws ids like pi: up to 100 candidates not already in use, then
// a full UUID.
func entryID(candidate func() string, fallback func() string, inUse func(string) bool) string {
	for range 100 {
		id := candidate()
		if !inUse(id) {
			return id
		}
	}
	return fallback()
}
