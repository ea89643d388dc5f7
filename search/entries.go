package search

import (
	"hash/crc32"
	"io"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// Both engines' indexing reads a session file's lines the same way:
// where its new lines begin (grownFrom), then each whole entry from
// there, with the header's id and cwd, the session's name and the tail
// (the last line read) that tells the next update where to go on.

// grownFrom returns end when the line indexed last, tailOff to end with
// the CRC-32 tailCRC, is still where it was in a file of size bytes (the
// file only grew: its new lines begin at end), and 0 when the file must
// be read from its start.
func grownFrom(r io.ReaderAt, size, tailOff, end int64, tailCRC uint32, buf *[]byte) int64 {
	if end <= 0 || size < end || end <= tailOff {
		return 0
	}
	n := end - tailOff
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	tail := (*buf)[:n]
	if k, err := r.ReadAt(tail, tailOff); (err != nil && int64(k) != n) || crc32.ChecksumIEEE(tail) != tailCRC {
		return 0
	}
	return end
}

// sessionScan is what eachEntry found of a session file's lines. Its
// tail fields are, on the call, those of the lines read before from (0
// when from is 0), and after it those of the last line read.
type sessionScan struct {
	notSession   bool   // the first line is no session header: no entry was given
	header       bool   // the header was read (from 0): id and cwd are its
	id, cwd      string // copies, never the read buffer's bytes
	named        bool   // a session_info entry named the session
	name         string // the last name given
	tailOff, end int64
	tailCRC      uint32
}

// eachEntry calls fn with each whole entry of the session file r between
// from and to, its offset and its length without the newline, through
// eachLine's *buf. A last line without its newline counts once it is a
// whole object (pi reads it too); a torn one waits for its end. When
// from is 0 the first entry must be a session header, or nothing is
// given. fn returns false to stop; the line it was given is then not in
// the tail. An error reading r is returned.
func eachEntry(r io.ReaderAt, from, to int64, buf *[]byte, sc *sessionScan, fn func(off, n int64, e *jsonl.Entry) bool) error {
	first := from == 0
	return eachLine(r, from, to, buf, func(off int64, data []byte, terminated bool) (bool, error) {
		line := data
		if terminated {
			line = data[:len(data)-1]
		} else if jsonl.JSBlank(line) {
			return false, nil
		} else if _, err := jsonl.ParseEntry(line); err != nil {
			return false, nil
		}
		if !jsonl.JSBlank(line) {
			if e, err := jsonl.ParseEntry(line); err == nil {
				if first {
					first = false
					if e.Type != jsonl.TypeSession {
						sc.notSession = true
						return false, nil
					}
					sc.header = true
					sc.id, sc.cwd = strings.Clone(e.ID), strings.Clone(jsonl.ParseHeader(e).Cwd)
					if e.IDKind != jsonl.KindString {
						sc.id = string(e.Raw) // never in a loadable file
					}
				}
				if e.Type == jsonl.TypeSessionInfo {
					if v, ok := e.StringField("name"); ok && jsonl.JSTrim(v) != "" {
						sc.name, sc.named = strings.Clone(jsonl.JSTrim(v)), true
					}
				}
				if !fn(off, int64(len(line)), &e) {
					return false, nil
				}
			}
		}
		sc.tailOff, sc.end = off, off+int64(len(data))
		sc.tailCRC = crc32.ChecksumIEEE(data)
		return true, nil
	})
}
