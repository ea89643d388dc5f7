package engine

import (
	"errors"

	"github.com/sessctl/sessctl/layout"
)

// The errors callers match with errors.Is. Typed errors carry details:
// *layout.CorruptError (path, line, offset) matches ErrCorrupt,
// *layout.VersionError matches ErrUnsupportedVersion, and the lock
// package's *LockedError (holder pid, command, host, since) matches
// ErrLocked.
var (
	// ErrNotFound is returned when a session file, entry or id does not
	// exist.
	ErrNotFound = errors.New("not found")
	// ErrClosed is returned by every method of a closed Session.
	ErrClosed = errors.New("session is closed")
	// ErrReadOnly is returned by the mutating methods of a Session opened
	// read-only.
	ErrReadOnly = errors.New("session is open read-only")
	// ErrCorrupt is layout.ErrCorrupt: a session file that cannot be used
	// as it is.
	ErrCorrupt = layout.ErrCorrupt
	// ErrUnsupportedVersion is layout.ErrUnsupportedVersion: a session
	// file newer than this code.
	ErrUnsupportedVersion = layout.ErrUnsupportedVersion
	// ErrVanished is returned when the session file was deleted or
	// replaced behind an open writer. pi silently re-creates such a file
	// without its header; sessctl refuses to write.
	ErrVanished = errors.New("session file was removed or replaced while open")
)

// CorruptError is layout.CorruptError.
type CorruptError = layout.CorruptError

// VersionError is layout.VersionError.
type VersionError = layout.VersionError

// notFoundError names what was not found and matches ErrNotFound.
type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return e.what + " not found" }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// entryNotFound is pi's "Entry <id> not found".
func entryNotFound(id string) error { return &notFoundError{"entry " + layout.KeyString(id)} }
