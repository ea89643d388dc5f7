package jsonl

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"unsafe"
)

// AppendEnvelopes appends to dst a compact binary record of what ParseFile
// found in each entry (offset, length and line of its bytes, and the
// envelope), so that DecodeEnvelopeParts can rebuild the entries of the same
// file without parsing it again (engine's cached offset index).
func AppendEnvelopes(dst []byte, entries []Entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(entries)))
	var prevOff int64
	prevLine := 0
	for i := range entries {
		e := &entries[i]
		dst = binary.AppendUvarint(dst, uint64(e.Offset-prevOff))
		size := len(e.Raw)
		if e.Detached() {
			size = int(e.segLen) // a detached entry's line is its bytes (see ParseReader)
		}
		dst = binary.AppendUvarint(dst, uint64(size))
		dst = binary.AppendUvarint(dst, uint64(e.Line-prevLine))
		prevOff, prevLine = e.Offset, e.Line
		dst = append(dst, byte(e.IDKind), byte(e.ParentKind))
		dst = binary.AppendUvarint(dst, uint64(e.msgStart))
		dst = binary.AppendUvarint(dst, uint64(e.msgEnd))
		for _, s := range [...]string{e.Type, e.ID, e.ParentID, e.Timestamp, e.Role} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

var errEnvelopes = errors.New("damaged envelope record")

// DecodeEnvelopeParts rebuilds the entries AppendEnvelopes recorded,
// their Raw bytes taken from data, the file the record was made of. The
// record is in parts, each what AppendEnvelopes appended for the next
// entries of the file and nothing else; the parts are decoded
// concurrently. The parts must not change afterwards: the strings share
// their memory. The record is checked for consistency with data (each
// entry's bytes lie inside data, in file order across the parts, and are
// a '{' ... '}' span; the message span lies inside them), not for being
// data's: the caller checks that data is the file it was made of.
func DecodeEnvelopeParts(data []byte, parts [][]byte) ([]Entry, error) {
	return decodeParts(data, int64(len(data)), parts)
}

// DecodeDetachedParts is DecodeEnvelopeParts without the file's bytes:
// the entries are detached (see ParseReader), each to be given its bytes
// by Fill, which checks them. size is the file's size; the record is
// checked for consistency with it (each entry lies inside it, in file
// order).
func DecodeDetachedParts(size int64, parts [][]byte) ([]Entry, error) {
	return decodeParts(nil, size, parts)
}

// decodeParts is DecodeEnvelopeParts, or DecodeDetachedParts when data
// is nil.
func decodeParts(data []byte, fileSize int64, parts [][]byte) ([]Entry, error) {
	bodies := make([][]byte, len(parts))
	counts := make([]int, len(parts))
	total := 0
	for i, p := range parts {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)) {
			return nil, errEnvelopes
		}
		// n <= len(p): the total is bounded by the record's size.
		bodies[i], counts[i] = p[k:], int(n)
		total += int(n)
	}
	out := make([]Entry, total)
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	at := 0
	for i := range parts {
		sub := out[at : at+counts[i] : at+counts[i]]
		at += counts[i]
		decode := func() {
			rest, err := decodeInto(sub, data, fileSize, bodies[i])
			if err == nil && len(rest) != 0 {
				err = errEnvelopes
			}
			errs[i] = err
		}
		if i == len(parts)-1 {
			decode()
		} else {
			wg.Go(decode)
		}
	}
	wg.Wait()
	at = 0
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		// The part's first entry follows the entry before it.
		if at > 0 && counts[i] > 0 {
			prev, next := &out[at-1], &out[at]
			if next.Offset < prev.Offset+int64(prev.segLen) || next.Line <= prev.Line {
				return nil, errEnvelopes
			}
		}
		at += counts[i]
	}
	return out, nil
}

// decodeInto decodes the entries of rec, a record AppendEnvelopes wrote
// without its leading count, into out (one per entry, zero); data is the
// file's bytes, or nil for detached entries. It returns the bytes of rec
// after the entries.
func decodeInto(out []Entry, data []byte, fileSize int64, rec []byte) ([]byte, error) {
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(rec)
		if k <= 0 {
			return 0, false
		}
		rec = rec[k:]
		return v, true
	}
	str := func() (string, bool) {
		l, ok := uv()
		if !ok || l > uint64(len(rec)) {
			return "", false
		}
		b := rec[:l]
		rec = rec[l:]
		if l == 0 {
			return "", true
		}
		return unsafe.String(&b[0], len(b)), true
	}
	var off int64
	end := int64(0) // end of the previous entry
	line := 0
	for i := range out {
		dOff, ok1 := uv()
		size, ok2 := uv()
		dLine, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || len(rec) < 2 {
			return nil, errEnvelopes
		}
		off += int64(dOff)
		line += int(dLine)
		if off < end || size < 2 || size > uint64(fileSize) || size > math.MaxInt32 || off > fileSize-int64(size) || (i > 0 && dLine == 0) {
			return nil, errEnvelopes
		}
		e := &out[i]
		if data != nil {
			raw := data[off : off+int64(size) : off+int64(size)]
			if raw[0] != '{' || raw[len(raw)-1] != '}' {
				return nil, errEnvelopes
			}
			e.Raw = raw
		}
		e.segLen = int32(size)
		end = off + int64(size)
		e.Offset, e.Line = off, line
		e.IDKind, e.ParentKind = Kind(rec[0]), Kind(rec[1])
		rec = rec[2:]
		if e.IDKind > KindObject || e.ParentKind > KindObject {
			return nil, errEnvelopes
		}
		ms, ok1 := uv()
		me, ok2 := uv()
		if !ok1 || !ok2 || ms > me || me > size {
			return nil, errEnvelopes
		}
		e.msgStart, e.msgEnd = int32(ms), int32(me)
		var ok [5]bool
		var typ, role string
		typ, ok[0] = str()
		e.ID, ok[1] = str()
		e.ParentID, ok[2] = str()
		e.Timestamp, ok[3] = str()
		role, ok[4] = str()
		if ok != [5]bool{true, true, true, true, true} {
			return nil, errEnvelopes
		}
		e.Type, e.Role = internType(typ), internRole(role)
	}
	return rec, nil
}

// internType returns the shared constant for a known entry type.
func internType(t string) string {
	switch t {
	case TypeMessage:
		return TypeMessage
	case TypeSession:
		return TypeSession
	case TypeThinkingLevelChange:
		return TypeThinkingLevelChange
	case TypeModelChange:
		return TypeModelChange
	case TypeCompaction:
		return TypeCompaction
	case TypeBranchSummary:
		return TypeBranchSummary
	case TypeCustom:
		return TypeCustom
	case TypeCustomMessage:
		return TypeCustomMessage
	case TypeLabel:
		return TypeLabel
	case TypeSessionInfo:
		return TypeSessionInfo
	case TypeUsage:
		return TypeUsage
	case TypeContextEdit:
		return TypeContextEdit
	}
	return t
}

// internRole returns the shared string for a common message role.
func internRole(r string) string {
	switch r {
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "toolResult":
		return "toolResult"
	case "bashExecution":
		return "bashExecution"
	case "custom":
		return "custom"
	}
	return r
}
