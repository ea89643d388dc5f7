package sessionfile

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// ErrSessionOwned is matched by the error of CheckOutput for a path that
// belongs to a session.
var ErrSessionOwned = errors.New("only the session's writer writes the files of a session")

// CheckOutput returns an error matching ErrSessionOwned when path names a
// file that belongs to a session, which nothing but the session's writer
// may create, write or replace: an existing session file (*.jsonl), its
// writer lock (<file>.lock, <file>.lock.excl), the lock's owner record
// (<file>.owner), a migration backup (<file>.v<N>.bak), a quarantined
// torn line (<file>.torn-<ms>), a temporary file of sessctl's writes (see
// TempFiles), or anything inside an AgentUse session directory (one named
// <ULID>-<agent> holding session.json or sessctl's session.lock). Names
// are judged whether or not the file exists, and whether or not its
// session does: replacing a live lock file lets a second writer in. A
// path where nothing of a session is found gives nil; the caller still
// decides whether to replace what is there. A nil fsys means vfs.OS().
func CheckOutput(fsys vfs.FS, path string) error {
	if fsys == nil {
		fsys = vfs.OS()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if what := sessionOwned(fsys, abs); what != "" {
		return fmt.Errorf("write %s: it is %s (%w)", path, what, ErrSessionOwned)
	}
	return nil
}

// sessionOwned names what the file at abs is to a session, or "".
func sessionOwned(fsys vfs.FS, abs string) string {
	dir, name := filepath.Split(abs)
	if layout.IsSessionFileName(name) {
		if st, err := fsys.Lstat(abs); err == nil && st.Mode().IsRegular() {
			return "a session file"
		}
	}
	for i := 0; ; {
		k := strings.Index(name[i:], ".jsonl.")
		if k < 0 {
			break
		}
		base := name[:i+k+len(".jsonl")]
		session := filepath.Join(dir, base)
		switch rest := name[len(base)+1:]; {
		case rest == "lock" || rest == "lock.excl":
			return "the writer lock of session " + session
		case rest == "owner":
			return "the lock owner record of session " + session
		case IsTemp(base, name):
			return "a temporary file of session " + session
		case strings.HasPrefix(rest, "torn-"):
			if IsSidecar(base, name) {
				return "a quarantined torn line of session " + session
			}
		case IsSidecar(base, name):
			return "a migration backup of session " + session
		}
		i += k + 1
	}
	for d := abs; ; {
		if _, _, ok := layout.SplitAgentUseDirName(filepath.Base(d)); ok {
			for _, f := range []string{layout.AgentUseSessionFile, layout.AgentUseLockFile} {
				if _, err := fsys.Lstat(filepath.Join(d, f)); err == nil {
					if d == abs {
						return "an AgentUse session directory"
					}
					return "in AgentUse session directory " + d
				}
			}
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}
