package engine

import "github.com/sessctl/sessctl/tree"

// The types of a session's lines are named in package tree (the codec
// that defines them is internal); these are the same types.

// Entry is one JSON object line of a session file (tree.Entry: its
// fields and methods are listed there). The entries a Session hands out
// are copies: changing them changes nothing in it.
type Entry = tree.Entry

// Header is the decoded header line of a session file (tree.Header).
type Header = tree.Header

// Kind is the JSON kind of an id, a parentId or a leaf (tree.Kind).
type Kind = tree.Kind

// The kinds of JSON values (tree's).
const (
	KindAbsent = tree.KindAbsent
	KindNull   = tree.KindNull
	KindBool   = tree.KindBool
	KindNumber = tree.KindNumber
	KindString = tree.KindString
	KindArray  = tree.KindArray
	KindObject = tree.KindObject
)

// CurrentVersion is the session format version sessctl writes and the
// newest it reads (pi's CURRENT_SESSION_VERSION).
const CurrentVersion = 3 // the codec's too (entry_test.go)
