package sessionfile

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// LockPath returns the writer lock file of a session file: <file>.lock.
// It is never renamed, and deleted only by a holder of the lock: by a
// trash of the session, and by a session whose file was never written
// when it closes.
func LockPath(sessionFile string) string { return sessionFile + ".lock" }

// TrashDirName is the directory deleted sessions are moved into (see
// TrashDir); store walks leave it out.
const TrashDirName = ".trash"

// TrashDir returns where the session file at path (absolute) goes when it
// is deleted at now: under <root>/.trash/<time>/ keeping the file's folder
// below root when the file is in the store root (pass "" for none),
// otherwise in .trash/<time> beside the file. One directory per deletion
// time keeps deletions of the same name apart.
func TrashDir(root, path string, now time.Time) string {
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			if rel, err := filepath.Rel(abs, filepath.Dir(path)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return filepath.Join(abs, TrashDirName, stamp, rel)
			}
		}
	}
	return filepath.Join(filepath.Dir(path), TrashDirName, stamp)
}

// IDFromFileName returns the id part of a file name of pi's
// "<timestamp>_<id>.jsonl" form, or "" for any other name.
func IDFromFileName(name string) string {
	base := strings.TrimSuffix(name, ".jsonl")
	i := strings.IndexByte(base, '_')
	if i != len("2026-03-01T09-00-00-123Z") {
		return ""
	}
	return base[i+1:]
}

// TempFiles returns the temporary files that sessctl's own writes of the
// session file at path (absolute) leave behind when they are interrupted
// by a kill or a crash: <file>.tmp-<16 hex digits> (an atomic rewrite: a
// new file, an empty file's header, a migration, an import),
// <file>.torn-<ms>.tmp-<16 hex digits> (a quarantine) and
// <file>.owner.tmp-<16 hex digits> (the lock's owner record). Only
// holders of the session's writer lock create them, so the ones a holder
// finds are stale: a write-mode session removes them at its first write,
// and a trash of the session moves them with it. Found without the lock
// (as a verification does), one may belong to a write that is running
// now. A nil fsys means vfs.OS().
func TempFiles(fsys vfs.FS, path string) ([]string, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	dir, base := filepath.Split(path)
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("temporary files of %s: %w", path, err)
	}
	var out []string
	for _, d := range ents {
		if d.Type().IsRegular() && IsTemp(base, d.Name()) {
			out = append(out, filepath.Join(dir, d.Name()))
		}
	}
	return out, nil
}

// IsTemp reports whether name is one of sessctl's temporary files of the
// session file base (see TempFiles).
func IsTemp(base, name string) bool {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, vfs.TempSuffix[1:])
	if i < 0 || !isHex16(rest[i+len(vfs.TempSuffix)-1:]) {
		return false
	}
	switch what := rest[:i]; {
	case what == "", what == "owner.":
		return true
	case strings.HasPrefix(what, "torn-") && strings.HasSuffix(what, "."):
		return isDigits(what[len("torn-") : len(what)-1])
	}
	return false
}

// IsSidecar reports whether name is a backup, quarantine or temporary
// file of the session file base: base.v<N>.bak, base.v<N>.bak.<k>,
// base.torn-<digits>, or one of TempFiles' names.
func IsSidecar(base, name string) bool {
	if IsTemp(base, name) {
		return true
	}
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return false
	}
	if v, ok := strings.CutPrefix(rest, "torn-"); ok {
		return isDigits(v)
	}
	if v, ok := strings.CutPrefix(rest, "v"); ok {
		num, k, numbered := strings.Cut(v, ".bak")
		if numbered && k != "" {
			// A backup whose name was taken: base.v<N>.bak.<k>.
			kk, ok := strings.CutPrefix(k, ".")
			if !ok || !isDigits(kk) {
				return false
			}
		} else if !numbered {
			return false
		}
		return num != "" && strings.Trim(num, "0123456789.") == ""
	}
	return false
}

func isHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
