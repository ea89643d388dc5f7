package lock

import (
	"fmt"
	"io/fs"
	"strings"
)

// Writer is a process that holds a file open for writing.
type Writer struct {
	PID     int
	Command string // the process's command name (/proc/<pid>/comm); "" when unknown
	FD      int    // the descriptor number in that process
}

// String names the writer as "pid 4821 (node)".
func (w Writer) String() string {
	if w.Command == "" {
		return fmt.Sprintf("pid %d", w.PID)
	}
	return fmt.Sprintf("pid %d (%s)", w.PID, w.Command)
}

// FileWriters lists the processes that hold the file described by fi (a
// FileInfo of the real file system) open for writing, that is through a
// descriptor opened with O_WRONLY or O_RDWR. Descriptors of this process
// whose numbers are in skip are left out, so a caller can leave out its
// own. Read-only descriptors (a reader, tail -f, an editor's view) are not
// writers.
//
// The kernel lock keeps out only writers that take it; pi takes none.
// FileWriters is how a writer that finds an unfinished last line tells an
// abandoned write (a killed process) from one still in progress.
//
// known is false where it cannot be told: outside Linux, where /proc is
// not mounted, and for a FileInfo that does not come from the real file
// system. Processes of other users whose descriptors cannot be read are
// not seen (they could not write a 0600 file of this user anyway, root
// aside).
func FileWriters(fi fs.FileInfo, skip ...int) (ws []Writer, known bool) {
	return fileWriters(fi, skip)
}

// WritersText names writers for a message: "pid 4821 (node), pid 4822".
func WritersText(ws []Writer) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, ", ")
}
