package errs

import (
	"errors"
	"fmt"
	"strings"
)

// ErrAmbiguous is matched by the errors of a name that is a prefix of the
// ids of more than one session (*AmbiguousError) or entry.
var ErrAmbiguous = errors.New("ambiguous session id")

// Candidate is a session a name may mean: its id and where it is stored
// (a pi session's file, an AgentUse session's directory).
type Candidate struct {
	ID   string
	Path string
}

// AmbiguousError lists the sessions a name matches. It matches
// ErrAmbiguous.
type AmbiguousError struct {
	Name       string
	Candidates []Candidate // sorted by path
}

// Error lists the name and up to ten of the sessions it matches.
func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions:", e.Name, len(e.Candidates))
	for i, c := range e.Candidates {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Candidates)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s  %s", c.ID, c.Path)
	}
	return b.String()
}

// Unwrap makes an AmbiguousError match ErrAmbiguous.
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// SyncPolicy says when what a session's writer writes is forced to stable
// storage. engine and engine/agentuse re-export it with their own
// documentation of what each policy means for their files.
type SyncPolicy int

const (
	// SyncEach forces every write to stable storage before the call
	// that made it returns. The default.
	SyncEach SyncPolicy = iota
	// SyncNone never forces writes to stable storage.
	SyncNone
)
