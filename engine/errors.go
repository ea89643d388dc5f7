package engine

import (
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/lock"
)

// The errors callers match with errors.Is. Typed errors carry details:
// *CorruptError (path, line, offset) matches ErrCorrupt, *VersionError
// matches ErrUnsupportedVersion, *LockedError (holder pid, command, host,
// since) matches ErrLocked, *BusyError matches ErrBusy, *LoopError matches
// ErrCorrupt, *AmbiguousError matches ErrAmbiguous, and *EntryError
// matches ErrNotFound or ErrAmbiguous. ErrNotFound, ErrClosed,
// ErrCorrupt, ErrLocked, ErrAmbiguous and their typed errors are the same
// values in package engine/agentuse. Errors of the filesystem seam
// (vfs.ErrSymlink, vfs.ErrNotRegular, vfs.ErrReadOnly) and of names
// (layout.ErrUnsafeName) are wrapped as they are.
var (
	// ErrNotFound is returned when a session file, entry or id does not
	// exist.
	ErrNotFound = errs.ErrNotFound
	// ErrClosed is returned by every method of a closed Session.
	ErrClosed = errs.ErrClosed
	// ErrReadOnly is returned by the mutating methods of a Session opened
	// read-only.
	ErrReadOnly = errors.New("session is open read-only")
	// ErrCorrupt means a session file that cannot be used as it is.
	ErrCorrupt = errs.ErrCorrupt
	// ErrUnsupportedVersion means a session file newer than this code.
	ErrUnsupportedVersion = errs.ErrUnsupportedVersion
	// ErrLocked is returned when another writer holds the session's
	// writer lock; the error is a *LockedError naming the holder.
	ErrLocked = lock.ErrLocked
	// ErrVanished is returned when the session file was deleted or
	// replaced behind an open writer. pi silently re-creates such a file
	// without its header; sessctl refuses to write.
	ErrVanished = errors.New("session file was removed or replaced while open")
	// ErrBusy is returned by a write that found the session file's last
	// line unfinished while another process holds the file open for
	// writing, and the line did not finish within StoreOptions.TornWait.
	// pi takes no writer lock, so the lock cannot keep it out; cutting
	// the line could cut an entry pi is still writing. Nothing was
	// written; the write may be tried again. The error is a *BusyError
	// naming the processes.
	ErrBusy = errors.New("session file is being written by another process")
	// ErrAmbiguous is matched by the errors of a name that is a prefix of
	// the ids of more than one session (*AmbiguousError) or entry
	// (*EntryError).
	ErrAmbiguous = errs.ErrAmbiguous
	// ErrDuplicateID is returned (wrapped) by AppendLines for a line whose
	// id the session already has.
	ErrDuplicateID = errors.New("entry id already in the session")
)

// AmbiguousError lists the sessions a name matches. It matches
// ErrAmbiguous, and is the same type as engine/agentuse's:
//
//	type AmbiguousError struct {
//		Name       string
//		Candidates []struct{ ID, Path string } // sorted by path
//	}
//
// Its Error names up to ten of the candidates.
type AmbiguousError = errs.AmbiguousError

// BusyError names the processes that hold a session file open for writing
// while its last line is unfinished. It matches ErrBusy.
type BusyError struct {
	Path    string
	Writers []lock.Writer
	Bytes   int // the size of the unfinished line
}

func (e *BusyError) Error() string {
	who := "another process"
	if len(e.Writers) > 0 {
		who = lock.WritersText(e.Writers)
	}
	return fmt.Sprintf("%s is being written by %s: its last line (%d bytes) is unfinished and did not finish in time; nothing was written",
		e.Path, who, e.Bytes)
}

// Is reports whether target is ErrBusy.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// LoopError reports a write refused because the parent chain of the new
// entry (or of a branch target) runs into a parent-id loop: a cycle, or an
// entry that is its own parent. pi walks that chain from the leaf when it
// opens the session and never finishes, so the entry would make the file
// unusable in pi. Nothing was written. package engine/repair shows the
// loop (Verify) and breaks it (File). It matches ErrCorrupt.
type LoopError struct {
	Path  string // the session file; "" in memory
	Entry string // the entry the chain starts from: the new entry's parent or the branch target
	At    string // the first entry the walk reaches twice
	Line  int    // At's line in the file; 0 when not known
}

func (e *LoopError) Error() string {
	where := e.Path
	if where == "" {
		where = "session"
	}
	at := ""
	if e.Line > 0 {
		at = fmt.Sprintf(" (line %d)", e.Line)
	}
	return fmt.Sprintf("%s: the parent chain of entry %s runs into a parent-id loop at entry %s%s; pi would never finish loading the session after this write, so nothing was written",
		where, jsonl.KeyString(e.Entry), jsonl.KeyString(e.At), at)
}

// Is reports whether target is ErrCorrupt.
func (e *LoopError) Is(target error) bool { return target == ErrCorrupt }

// CorruptError names the file, line and byte offset where a session file
// is damaged, and what is wrong there (Err). It matches ErrCorrupt.
type CorruptError = errs.CorruptError

// VersionError reports a session file whose header version (Found) is
// newer than the newest this code reads (Max). It matches
// ErrUnsupportedVersion.
type VersionError = errs.VersionError

// entryNotFound is pi's "Entry <id> not found".
func entryNotFound(id string) error { return errs.NotFound("entry " + jsonl.KeyString(id)) }
