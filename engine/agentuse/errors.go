package agentuse

import (
	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/lock"
)

// The errors callers match with errors.Is. They are the same values as
// package engine's, so one errors.Is serves both stores: ErrNotFound,
// ErrClosed, ErrCorrupt (a *CorruptError naming the file) and ErrLocked
// (a *LockedError naming the holder). An id prefix that names several
// sessions is an *AmbiguousError matching ErrAmbiguous. Unsafe ids and
// names match layout.ErrUnsafeName (layout.ErrBadID for an id that is not
// a ULID); a symbolic link where a directory is expected matches
// vfs.ErrSymlink.
var (
	// ErrNotFound is returned for a session, message, part or file that
	// does not exist, updates of a missing file included.
	ErrNotFound = errs.ErrNotFound
	// ErrClosed is returned by every method of a closed Session, and
	// of a closed Store (Dir aside).
	ErrClosed = errs.ErrClosed
	// ErrCorrupt means a file that is not one JSON object.
	ErrCorrupt = errs.ErrCorrupt
	// ErrLocked means another writer holds the session's lock.
	ErrLocked = lock.ErrLocked
	// ErrAmbiguous means an id prefix that names more than one session
	// (an *AmbiguousError).
	ErrAmbiguous = errs.ErrAmbiguous
)

// CorruptError names a file that cannot be used as it is, and what is
// wrong with it (Err). It matches ErrCorrupt.
type CorruptError = errs.CorruptError

// AmbiguousError lists the sessions an id prefix matches: Name, the
// prefix, and Candidates, each session's id and directory (Path), sorted
// by path. It matches ErrAmbiguous, and is the same type as package
// engine's.
type AmbiguousError = errs.AmbiguousError

// LockedError names the holder of a session's writer lock (pid, command,
// host, since). It matches ErrLocked.
type LockedError = lock.LockedError

// SyncPolicy says when the files a Session writes are forced to stable
// storage. It is the same type as package engine's, so one value serves
// both stores.
type SyncPolicy = errs.SyncPolicy

const (
	// SyncEach fsyncs every file and its directory before the call that
	// wrote it returns: an acknowledged update survives a power cut. The
	// default.
	SyncEach SyncPolicy = errs.SyncEach
	// SyncNone never fsyncs (AgentUse's behaviour): files are still
	// replaced atomically, so a crash of the process leaves the old or
	// the new file, but a power cut may lose recent updates. For tests,
	// benchmarks and scratch stores.
	SyncNone SyncPolicy = errs.SyncNone
)
