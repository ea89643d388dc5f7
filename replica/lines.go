package replica

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// ErrSessionMismatch is returned (wrapped) when the remote copy filed
// under a session's name holds another session: its header's id is not
// the local header's, or not the id in the file name. Nothing of it is
// restored, merged or pushed over.
var ErrSessionMismatch = errors.New("another session under this name")

// RefusedLine is a line of a remote copy that a pull left out of the
// local file: a restore or merge takes complete entry lines only (the
// session header first, then JSON objects with a string id, each ending
// in a newline). The remote copy is left as it is.
type RefusedLine struct {
	// Object is the data object (segment) holding the line, and Line its
	// 1-based number in that object.
	Object string
	Line   int
	// Reason says why it was refused.
	Reason string
}

func (l RefusedLine) String() string {
	return fmt.Sprintf("line %d of %s: %s", l.Line, l.Object, l.Reason)
}

// headerID is the session id of a header line ("" when it has none).
func headerID(line []byte) string {
	e, err := jsonl.ParseEntry(line)
	if err != nil || !e.IsHeader() || e.IDKind != jsonl.KindString {
		return ""
	}
	return e.ID
}

// nameID is the session id in a session file name of pi's shape,
// <timestamp>_<id>.jsonl with the timestamp as layout.SessionFileName
// writes it; ok is false for a name of another shape.
func nameID(name string) (id string, ok bool) {
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return "", false
	}
	ts, id, ok := strings.Cut(base, "_")
	// 2026-03-01T09-00-00-000Z: digits, with '-' and 'T' and 'Z' in place.
	const shape = "dddd-dd-ddTdd-dd-dd-dddZ"
	if !ok || id == "" || len(ts) != len(shape) {
		return "", false
	}
	for i := 0; i < len(shape); i++ {
		c := ts[i]
		if shape[i] == 'd' && (c < '0' || c > '9') || shape[i] != 'd' && c != shape[i] {
			return "", false
		}
	}
	return id, true
}

// sameSession refuses a remote copy of session name whose header has
// another session id than the id in the file name or, when localID is
// not "", than the local file's header. op names the operation.
func sameSession(op, name, remoteID, localID string) error {
	if localID != "" && remoteID != localID {
		return fmt.Errorf("%s %s: the remote copy's header has session id %q, the local file's %q: %w", op, name, remoteID, localID, ErrSessionMismatch)
	}
	if id, ok := nameID(name); ok && remoteID != id {
		return fmt.Errorf("%s %s: the remote copy's header has session id %q, the file name %q: %w", op, name, remoteID, id, ErrSessionMismatch)
	}
	return nil
}
