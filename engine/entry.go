package engine

import "github.com/sessctl/sessctl/internal/jsonl"

// The JSON codec is internal to the module (internal/jsonl), so the types
// a Session hands out are named here. They are aliases: a value of
// engine.Entry is the tree and compaction packages' entry too.

// Entry is one JSON object line of a session file: the envelope every
// entry shares, decoded (Type, ID, ParentID, Timestamp, a message's Role,
// the line's Offset and Line number, IDKind and ParentKind), plus Raw, the
// line's bytes exactly as read: unknown members, unknown entry types and
// key order survive every read and every append. Message returns a
// message entry's "message" object, Field and StringField any top-level
// member. A non-string id or parentId is kept as "\x00" followed by its
// JSON text, so it never equals a string id.
type Entry = jsonl.Entry

// Header is the decoded header line of a session file (Version, Cwd,
// ParentSession, each with a Has... flag); the line itself stays in its
// Entry's Raw and is what gets written back.
type Header = jsonl.Header

// Kind is the JSON kind of an id, a parentId or a leaf: KindString for an
// id, KindNull for null (a root's parentId, the explicit null leaf),
// KindAbsent when the member is missing.
type Kind = jsonl.Kind

// The kinds of JSON values.
const (
	KindAbsent = jsonl.KindAbsent
	KindNull   = jsonl.KindNull
	KindBool   = jsonl.KindBool
	KindNumber = jsonl.KindNumber
	KindString = jsonl.KindString
	KindArray  = jsonl.KindArray
	KindObject = jsonl.KindObject
)

// CurrentVersion is the session format version sessctl writes and the
// newest it reads (pi's CURRENT_SESSION_VERSION).
const CurrentVersion = jsonl.CurrentVersion
