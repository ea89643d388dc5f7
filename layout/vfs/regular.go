package vfs

import (
	"errors"
	"os"
)

// ErrNotRegular is matched by errors.Is when a file sessctl was asked to
// read is not a regular file: a named pipe, a socket or a device, whose
// open or read could wait forever or have effects. A directory is reported
// with syscall.EISDIR instead ("is a directory").
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens name for reading (following symbolic links) and
// returns it only when it is a regular file. Anything else is refused at
// once with an *fs.PathError naming the file: ErrNotRegular for a named
// pipe, socket or device, syscall.EISDIR for a directory. The open itself
// never waits: where the system has O_NONBLOCK it is opened with it (so a
// named pipe without a writer does not block) and the flag is cleared
// again once the file is known to be regular. Every reader of session
// files and of foreign agents' stores opens through it (or through FS,
// whose real OpenFile and ReadFile do the same).
func OpenRegular(name string) (*os.File, error) { return openRegular(name, os.O_RDONLY) }

// ReadRegular reads the whole of name, which must be a regular file (see
// OpenRegular). Large files are read in parallel, as ReadFile does.
func ReadRegular(name string) ([]byte, error) { return ReadFile(osFS{}, name) }
