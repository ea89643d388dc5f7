package tree

import "github.com/sessctl/sessctl/internal/jsonl"

// The JSON codec is internal to the module (internal/jsonl), so the types
// of its that public signatures carry are named here, at the bottom of
// the public packages: compaction, migrate and engine use these names.

// Entry is one JSON object line of a session file: the envelope every
// entry shares, decoded, and the line's bytes exactly as read (Raw):
// unknown members, unknown entry types and key order survive every read
// and every append. The module's JSON codec defines it and is internal,
// so this is its public name (engine.Entry is the same type), with these
// fields and methods:
//
//	type Entry struct {
//		Raw        []byte // the JSON object, without surrounding whitespace and newline
//		Type       string // "message", "model_change", "label", ...; "" when absent or not a string
//		ID         string
//		ParentID   string
//		Timestamp  string
//		Role       string // the role of a message entry's message, when it is a string
//		Offset     int64  // byte offset of the line in the file
//		Line       int    // 1-based line number in the file, 0 when not read from a file
//		IDKind     Kind   // KindString normally; KindAbsent when the line has no id
//		ParentKind Kind   // KindString, KindNull for a root, KindAbsent when missing
//	}
//
//	func (e *Entry) Message() []byte // a message entry's "message" object, nil otherwise
//	func (e *Entry) Field(key string) ([]byte, bool) // any top-level member, as JSON
//	func (e *Entry) StringField(key string) (string, bool)
//	func (e *Entry) IsHeader() bool
//	func (e *Entry) HasParent() bool
//	func (e *Entry) IDJSON() ([]byte, bool) // the id as JSON text
//	func (e *Entry) ParentJSON() ([]byte, bool)
//
// A message entry decodes to a typed message with one call:
//
//	m, err := message.Decode(e.Message()) // *message.User, *message.Assistant, ...
//
// A non-string id or parentId (which no writer produces, but a hand-made
// file may hold) is kept as "\x00" followed by its JSON text, so it never
// equals a string id; IDKind and ParentKind say which it is. The entries
// an engine.Session hands out are copies: changing them changes nothing
// in it.
type Entry = jsonl.Entry

// Header is the decoded header line of a session file (Version, Cwd,
// ParentSession, each with a Has... flag); the line itself stays in its
// Entry's Raw and is what gets written back.
type Header = jsonl.Header

// Kind is the JSON kind of an id, a parentId or a leaf: KindString for an
// id, KindNull for null (a root's parentId, the explicit null leaf),
// KindAbsent when the member is missing.
type Kind = jsonl.Kind

// The kinds of JSON values, the codec's (entry_test.go holds them to
// it).
const (
	KindAbsent Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)
