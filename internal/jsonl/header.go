package jsonl

import "time"

// CurrentVersion is the session format version sessctl writes (pi's
// CURRENT_SESSION_VERSION).
const CurrentVersion = 3

// Header is the decoded view of a session header line. The line itself
// stays in Entry.Raw and is what gets written back.
type Header struct {
	Entry
	IDString         bool    // the id is a JSON string, as a valid header needs
	Version          float64 // the header's version; 1 when absent
	HasVersion       bool
	Cwd              string
	HasCwd           bool // cwd is present and a string
	ParentSession    string
	HasParentSession bool // parentSession is present and a string
}

// ParseHeader decodes the header fields of a "session" entry.
func ParseHeader(e Entry) Header {
	h := Header{Entry: e, Version: 1}
	h.IDString = e.IDKind == KindString
	_ = Members(e.Raw, func(m *Member) bool {
		switch m.KeyString() {
		case "version":
			if KindOf(m.Value) == KindNumber {
				h.Version, h.HasVersion = parseNumber(m.Value), true
			} else {
				h.Version, h.HasVersion = 1, false
			}
		case "cwd":
			h.Cwd, h.HasCwd = String(m.Value)
		case "parentSession":
			h.ParentSession, h.HasParentSession = String(m.Value)
		}
		return true
	})
	return h
}

// NewHeaderLine returns the header line pi writes for a new session: keys
// type, version, id, timestamp, cwd and, when given, parentSession.
func NewHeaderLine(id string, ts time.Time, cwd string, parentSession *string) []byte {
	b := NewObject(160).
		String("type", TypeSession).
		Number("version", CurrentVersion).
		String("id", id).
		String("timestamp", ISOTime(ts)).
		String("cwd", cwd)
	if parentSession != nil {
		b.String("parentSession", *parentSession)
	}
	return b.Bytes()
}
