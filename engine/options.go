package engine

import (
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/layout"
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

// Options configure how sessions are found, opened and written. The zero
// value is valid: pi's agent directory from the environment, the default
// per-cwd session directory, the writer lock, fsync on every append, the
// real filesystem and clock, random ids (time-ordered session ids).
type Options struct {
	// Dir is the session directory (pi's sessionDir). "" means the default
	// <agentDir>/sessions/--<cwd>--/ for Create, List and ContinueRecent,
	// and the file's own directory for Open.
	Dir string
	// AgentDir is the agent directory. "" resolves Agent's directory from
	// the environment.
	AgentDir string
	// Agent selects the store whose environment variables resolve AgentDir:
	// layout.AgentPi (default) or layout.AgentIndusagi.
	Agent layout.Agent
	// Cwd, for Open, replaces the cwd taken from the header.
	Cwd string

	// ReadOnly opens without the writer lock and never writes the session
	// (only, for a large one, its offset index in CacheDir): migration
	// happens in memory, a torn tail is left alone, mutating methods fail
	// with ErrReadOnly.
	ReadOnly bool
	// Wait makes a write-mode open wait for the writer lock until its
	// context is done, instead of failing at once with ErrLocked.
	Wait bool
	// LockMode is recorded in the lock owner record ("write" by default).
	LockMode string
	// Command is recorded in the lock owner record (default: the program
	// name).
	Command string
	// NoLock skips the writer lock. Only for callers that hold the
	// session's lock themselves.
	NoLock bool

	// ParentSession, for Create (and the new session ContinueRecent may
	// create), is written as the header's parentSession: the session
	// is a child, such as a subagent's (see also Session.NewChild). ""
	// leaves it out.
	ParentSession string
	// SkipChildSessions makes ContinueRecent pass over sessions whose
	// header has a parentSession (children, forks, branched sessions), so
	// an agent does not resume its subagent's session. pi does not skip
	// them; the default is pi's rule.
	SkipChildSessions bool

	// Sync is the durability policy for appends. It also sets how often a
	// session looks for lines other processes appended to its file (pi
	// takes no lock): before every write under SyncEach; under SyncNone
	// before the first write and then at most every 100 ms, where the
	// look (a system call) would cost as much as the append.
	Sync SyncPolicy
	// TornWait bounds how long a write waits for an unfinished last line
	// (one without its newline) that another process holding the file
	// open for writing may still be writing: pi takes no lock and appends
	// beside sessctl. While the line grows the wait starts over; when it
	// is complete it is read like any other entry. A line that stays
	// unfinished for TornWait while a writer holds the file fails the
	// write with ErrBusy and leaves the file alone; one that no process
	// holds open for writing is abandoned and is cut off at once (its
	// bytes kept in <file>.torn-<ms>). Where the holders cannot be found
	// (outside Linux) a line that stays unchanged for TornWait counts as
	// abandoned. 0 means 2 seconds.
	TornWait time.Duration
	// NoBackup skips the <file>.v<N>.bak copy when opening for writing
	// migrates a file.
	NoBackup bool

	// CacheDir is where sessctl's caches live (the list index a writer
	// keeps current when it closes a session, the offset index of large
	// sessions opened read-only); "" means layout.CacheDir().
	CacheDir string
	// NoOffsetIndex makes a read-only open of a large session parse the
	// whole file without looking for, or keeping, its cached offset index
	// (see OffsetIndexPath). The index never changes what an open
	// returns, only how fast it is. It is used only where a file's stat
	// identifies the file (an inode: not on Windows).
	NoOffsetIndex bool
	// Replicator, when set, is told of every write to the session's file
	// and of Close, to ship new lines in the background (see package
	// replica). nil: nothing leaves the machine.
	Replicator Replicator

	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewSessionID returns session ids; nil means version 7 UUIDs
	// (time-ordered, from the system clock, not Now), as pi 0.73.1 draws
	// them.
	NewSessionID func() string
	// NewEntryID returns candidate entry ids; candidates already in use
	// are skipped as pi does. nil means 8 random hex digits.
	NewEntryID func() string

	// testIndexMin, when positive, replaces offsetIndexMin; testIndexHook
	// is told how each open that looked for an offset index used it. For
	// tests (export_test.go).
	testIndexMin  int64
	testIndexHook func(indexUse)
}

func (o Options) fs() vfs.FS { return orOS(o.FS) }

// defaultTornWait is TornWait's default.
const defaultTornWait = 2 * time.Second

func (o Options) tornWait() time.Duration {
	if o.TornWait <= 0 {
		return defaultTornWait
	}
	return o.TornWait
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o Options) sessionID() string {
	if o.NewSessionID == nil {
		return newSessionID(time.Now())
	}
	return o.NewSessionID()
}

// agentDir resolves the agent directory.
func (o Options) agentDir() (string, error) {
	if o.AgentDir != "" {
		return o.AgentDir, nil
	}
	return layout.AgentDir(o.Agent)
}

// sessionDir resolves the directory for sessions of cwd and creates it, as
// pi does whenever it computes its default directory. Only writers call
// it; readers use sessionDirPath, which creates nothing.
func (o Options) sessionDir(cwd string) (string, error) {
	abs, err := o.sessionDirPath(cwd)
	if err != nil {
		return "", err
	}
	if err := vfs.MkdirAllSync(o.fs(), abs, vfs.DirMode); err != nil {
		return "", err
	}
	return abs, nil
}

// sessionDirPath resolves the directory for sessions of cwd (o.Dir, or
// cwd's per-cwd directory under the agent directory), absolute.
func (o Options) sessionDirPath(cwd string) (string, error) {
	dir := o.Dir
	if dir == "" {
		agent, err := o.agentDir()
		if err != nil {
			return "", err
		}
		dir = layout.DefaultSessionDir(agent, cwd)
	}
	return filepath.Abs(dir)
}

// processCwd is pi's fallback cwd: the process working directory.
func processCwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}
