package engine

import (
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/layout/vfs"
)

// SyncPolicy says when appended lines are forced to stable storage. It is
// the same type as engine/agentuse's.
type SyncPolicy = errs.SyncPolicy

const (
	// SyncEach fsyncs after every append before the append returns: an
	// acknowledged entry survives a crash or power cut. The default.
	SyncEach SyncPolicy = errs.SyncEach
	// SyncNone never fsyncs appends (pi's behaviour): an acknowledged entry
	// survives a crash of the process but not of the machine. For tests,
	// benchmarks and scratch sessions.
	SyncNone SyncPolicy = errs.SyncNone
)

// options configure one session: its store's options and what its
// Create, Open or ContinueRecent asked for.
type options struct {
	// StoreOptions are the store's (its Dir is the store's, not the
	// session's: see Dir below).
	StoreOptions

	// Dir is the session directory (pi's sessionDir): where the file of
	// a new session goes, NewSession's and CreateBranchedSession's too.
	// An open of a path may leave it "": the file's own directory.
	Dir string
	// Cwd, for an open, replaces the cwd taken from the header.
	Cwd string
	// ReadOnly, Wait, LockMode, NoBackup, SkipChildSessions and create
	// are OpenOptions'.
	create            bool
	ReadOnly          bool
	Wait              bool
	LockMode          string
	NoBackup          bool
	SkipChildSessions bool
	// onlyCwd, for ContinueRecent in a directory every cwd shares (a
	// store opened on StoreOptions.Dir), passes over the sessions whose
	// header names another cwd.
	onlyCwd string
	// ParentSession and writeAtOnce are CreateOptions'.
	ParentSession string
	writeAtOnce   bool
}

func (o options) fs() vfs.FS { return orOS(o.FS) }

// defaultTornWait is TornWait's default.
const defaultTornWait = 2 * time.Second

func (o options) tornWait() time.Duration {
	if o.TornWait <= 0 {
		return defaultTornWait
	}
	return o.TornWait
}

func (o options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o options) sessionID() string {
	if o.NewSessionID == nil {
		return newSessionID(time.Now())
	}
	return o.NewSessionID()
}

// sessionDir returns the session directory, absolute, and creates it, as
// pi does whenever it computes its default directory. Only writers call
// it.
func (o options) sessionDir() (string, error) {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return "", err
	}
	if err := vfs.MkdirAllSync(o.fs(), abs, vfs.DirMode); err != nil {
		return "", err
	}
	return abs, nil
}

// processCwd is pi's fallback cwd: the process working directory.
func processCwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

func orOS(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return vfs.OS()
	}
	return fsys
}
