package lock

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Owner is the record a holder writes beside the lock file after taking it.
// It only explains a lock; the kernel lock (or, in fallback mode, the
// existence of the exclusive file) is what decides who holds it.
type Owner struct {
	PID       int       `json:"pid"`
	StartTime uint64    `json:"startTime,omitempty"` // Linux: field 22 of /proc/<pid>/stat (clock ticks since boot); 0 = unknown
	BootID    string    `json:"bootId,omitempty"`    // /proc/sys/kernel/random/boot_id, "" elsewhere
	Host      string    `json:"host"`
	User      string    `json:"user,omitempty"`
	Command   string    `json:"command"` // Options.Command or filepath.Base(os.Args[0])
	Mode      string    `json:"mode"`    // e.g. "write", "migrate", "repair"
	Since     time.Time `json:"since"`
}

// maxRecord bounds how much of an owner record is read; a real one is a
// few hundred bytes.
const maxRecord = 64 << 10

// OwnerPath returns the path of the owner record that belongs to the lock
// file lockPath: lockPath without its ".lock" suffix plus ".owner", or
// lockPath plus ".owner" when it has no ".lock" suffix.
func OwnerPath(lockPath string) string {
	return strings.TrimSuffix(lockPath, ".lock") + ".owner"
}

// exclPath returns the fallback lock file for lockPath.
func exclPath(lockPath string) string { return lockPath + ".excl" }

// self describes the calling process the way an Owner record would.
type self struct {
	PID       int
	StartTime uint64
	BootID    string
	Host      string
}

func currentSelf() self {
	s := self{PID: os.Getpid(), BootID: bootID()}
	if st, err := readProcStat(s.PID); err == nil {
		s.StartTime = st.StartTime
	}
	s.Host, _ = os.Hostname()
	return s
}

// newOwner builds the record this process writes for a lock.
func newOwner(me self, opts Options) Owner {
	o := Owner{
		PID:       me.PID,
		StartTime: me.StartTime,
		BootID:    me.BootID,
		Host:      me.Host,
		Command:   opts.Command,
		Mode:      opts.Mode,
		Since:     opts.Now(),
	}
	if u, err := user.Current(); err == nil {
		o.User = u.Username
	}
	return o
}

// encodeOwner returns the record as one JSON object and a newline.
func encodeOwner(o Owner) ([]byte, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// errSymlink is wrapped by every error about a symbolic link planted where
// lock expects a regular file.
var errSymlink = errors.New("is a symbolic link")

// isSymlink reports whether path names a symbolic link.
func isSymlink(fsys vfs.FS, path string) bool {
	fi, err := fsys.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// readNoFollow reads a small regular file without following a symbolic
// link at path and without blocking on a FIFO (the real filesystem's
// read-only open refuses anything but a regular file at once, and on
// Windows opens with delete sharing, so that a holder can remove or
// replace the file while another process reads it).
func readNoFollow(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && isSymlink(fsys, path) {
			return nil, fmt.Errorf("%s %w", path, errSymlink)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", path, errSymlink)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, maxRecord))
}

// record is an owner record as read from disk.
type record struct {
	Data   []byte // the raw bytes, to tell whether a record is still ours
	Owner  *Owner // nil when the record is missing or unusable
	Reason string // why Owner is nil
}

// readRecord reads and decodes the owner record at path. A missing,
// unreadable or garbled record gives a nil Owner and a reason, never an
// error: the record only explains a lock. The error is returned as well
// so callers can tell "missing" (fs.ErrNotExist) from the rest.
func readRecord(fsys vfs.FS, path string) (record, error) {
	data, err := readNoFollow(fsys, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return record{Reason: "no owner record"}, err
	case errors.Is(err, errSymlink):
		return record{Reason: "owner record is a symbolic link, not read"}, err
	case err != nil:
		return record{Reason: "owner record unreadable: " + err.Error()}, err
	}
	rec := record{Data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		rec.Reason = "owner record is empty"
		return rec, nil
	}
	var o Owner
	if err := json.Unmarshal(data, &o); err != nil {
		rec.Reason = "owner record is garbled"
		return rec, nil
	}
	if o.PID <= 0 {
		rec.Reason = fmt.Sprintf("owner record has no valid pid (%d)", o.PID)
		return rec, nil
	}
	rec.Owner = &o
	return rec, nil
}

// writeOwnerFile replaces the owner record at path atomically: a temp file
// in the same directory (O_EXCL, no symlinks, 0600, owned like like),
// write, fsync, rename, fsync the directory. A symbolic link at path is
// refused.
func writeOwnerFile(fsys vfs.FS, path string, data []byte, like fs.FileInfo) (err error) {
	if isSymlink(fsys, path) {
		return fmt.Errorf("write owner record: %s %w", path, errSymlink)
	}
	tmp := path + ".tmp-" + randomSuffix()
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return fmt.Errorf("write owner record: %w", err)
	}
	defer func() {
		if err != nil {
			fsys.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = vfs.OwnLike(f, like)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write owner record: %w", err)
	}
	// Checked again just before the rename; rename itself never follows a
	// link, so a link appearing in between is replaced, not written through.
	if isSymlink(fsys, path) {
		return fmt.Errorf("write owner record: %s %w", path, errSymlink)
	}
	if err := replaceFile(fsys, tmp, path); err != nil {
		return fmt.Errorf("write owner record: %w", err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write owner record: sync directory %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// randomSuffix returns 16 random hex digits for temp and stale file names.
func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}

// verdict is what an owner record says about its holder.
type verdict int

const (
	live      verdict = iota // the recorded process is alive on this host and boot
	selfHeld                 // the recorded process is this one
	stale                    // same host and boot, and the recorded process is gone or was replaced
	otherBoot                // same host name, different boot id
	otherHost                // written on another host
	noRecord                 // no usable record
)

// judge classifies an owner record against the calling process.
func judge(o *Owner, me self) (verdict, string) {
	if o == nil {
		return noRecord, ""
	}
	if o.Host != me.Host {
		return otherHost, fmt.Sprintf("held from another host (%s)", o.Host)
	}
	if o.BootID != "" && me.BootID != "" && o.BootID != me.BootID {
		return otherBoot, "the record was written under another boot id (an earlier boot, or another machine with the same host name)"
	}
	if o.PID == me.PID {
		if o.StartTime != 0 && me.StartTime != 0 && o.StartTime != me.StartTime {
			return stale, fmt.Sprintf("pid %d was reused: start time differs", o.PID)
		}
		return selfHeld, ""
	}
	if !pidAlive(o.PID) {
		return stale, fmt.Sprintf("pid %d is gone", o.PID)
	}
	st, err := readProcStat(o.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return stale, fmt.Sprintf("pid %d is gone", o.PID)
	}
	if err == nil {
		if st.State == 'Z' || st.State == 'X' {
			return stale, fmt.Sprintf("pid %d has exited", o.PID)
		}
		if o.StartTime != 0 && st.StartTime != o.StartTime {
			return stale, fmt.Sprintf("pid %d was reused: start time differs", o.PID)
		}
	}
	return live, ""
}
