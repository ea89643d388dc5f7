package engine

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newUUID returns a random lower-case version 4 UUID, like
// crypto.randomUUID().
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(&b)
}

// newSessionID returns a new session id: a lower-case version 7 UUID
// (RFC 9562) for the time t, 48 bits of Unix milliseconds then random
// bits, as pi 0.73.1 draws session ids (0.58.3 drew version 4). Ids of
// later milliseconds sort after earlier ones; within one millisecond
// their order is random (pi's generator keeps a counter there; a library
// holds no such state).
func newSessionID(t time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(&b)
}

// formatUUID writes 16 bytes as 8-4-4-4-12 lower-case hex digits.
func formatUUID(b *[16]byte) string {
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
