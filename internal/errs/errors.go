package errs

import (
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// ErrNotFound is returned when a session, file, entry, message or part
// does not exist.
var ErrNotFound = errors.New("not found")

// NotFound returns an error saying "<what> not found" that matches
// ErrNotFound.
func NotFound(what string) error { return &notFoundError{what} }

// notFoundError names what was not found and matches ErrNotFound.
type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return e.what + " not found" }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// ErrClosed is returned by every method of a closed session or writer.
var ErrClosed = errors.New("session is closed")

// ErrCorrupt is matched by errors.Is for every *CorruptError: a session file
// whose bytes cannot be used as they are (no valid header, a line that
// cannot be parsed where one is required).
var ErrCorrupt = errors.New("corrupt session file")

// CorruptError names the file and line where a session file is damaged.
type CorruptError struct {
	Path   string
	Line   int   // 1-based; 0 when the damage is not tied to a line
	Offset int64 // byte offset of that line
	Err    error // what is wrong there
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

// Unwrap returns the underlying cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// ErrUnsupportedVersion is matched by errors.Is for every *VersionError: a
// session file written by a newer format version than this code knows.
var ErrUnsupportedVersion = errors.New("unsupported session version")

// VersionError reports a session file whose header version is too new.
type VersionError struct {
	Path  string
	Found float64 // the header's version
	Max   int     // the newest version this code reads
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s: session version %s is newer than the supported version %d",
		e.Path, jsonl.AppendNumber(nil, e.Found), e.Max)
}

// Is reports whether target is ErrUnsupportedVersion.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }
