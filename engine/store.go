package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// StoreOptions configure a Store: where its session files are and how its
// sessions are written. The zero value is pi's store from the
// environment, fsync on every append, the real filesystem and clock,
// random ids.
type StoreOptions struct {
	// Dir is a directory of session files to use as the store instead of
	// an agent's (a test's directory, a copy, any directory). It is the
	// session directory of every cwd (pi's sessionDir): Create writes
	// there for any cwd; ContinueRecent, List and Sessions with a cwd
	// take only the sessions whose header names that cwd, as pi 1.x does
	// (ListOptions.EveryCwd lists them all, as pi 0.73.1 did), and List
	// with cwd "" lists every session file below it (see Files). An agent
	// keeping projects apart on disk uses an agent's store (AgentDir),
	// one directory per cwd, as pi does.
	Dir string
	// Agent is the agent whose store is used when Dir is "":
	// layout.AgentPi (the default) or layout.AgentIndusagi. Its sessions
	// are in <AgentDir>/sessions, one directory per cwd.
	Agent layout.Agent
	// AgentDir is the agent's directory; "" resolves it from the
	// environment (PI_CODING_AGENT_DIR, ~/.pi/agent, ...).
	AgentDir string
	// CacheDir is where sessctl's caches live: the list index a writer
	// keeps current when it closes a session, the offset index of large
	// sessions opened read-only. "" means layout.CacheDir(). Caches never
	// change an answer, only how fast it comes.
	CacheDir string
	// NoOffsetIndex makes read-only opens of large sessions parse the
	// whole file without looking for, or keeping, its cached offset
	// index. The index is used only where a file's stat identifies the
	// file (an inode: not on Windows).
	NoOffsetIndex bool

	// Sync is the durability policy for appends. It also sets how often a
	// session looks for lines other processes appended to its file (pi
	// takes no lock): before every write under SyncEach; under SyncNone
	// before the first write and then at most every 100 ms.
	Sync SyncPolicy
	// TornWait bounds how long a write waits for an unfinished last line
	// (one without its newline) that another process holding the file
	// open for writing may still be writing: pi takes no lock and appends
	// beside sessctl. While the line grows the wait starts over; when it
	// is complete it is read like any other entry. A line that stays
	// unfinished for TornWait while a writer holds the file fails the
	// write with ErrBusy and leaves the file alone; one that no process
	// holds open for writing is abandoned and cut off at once (its bytes
	// kept in <file>.torn-<ms>). Where the holders cannot be found
	// (outside Linux) a line that stays unchanged for TornWait counts as
	// abandoned. 0 means 2 seconds.
	TornWait time.Duration
	// Command is recorded in the owner record of the writer locks the
	// store's sessions take (default: the program name).
	Command string
	// Replicator, when set, is told of every write to a session's file
	// and of its Close, to ship new lines in the background (see package
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

	// noLock skips the writer lock (tests on a filesystem the lock
	// package cannot reach, export_test.go). testIndexMin, when
	// positive, replaces offsetIndexMin; testIndexHook is told how each
	// open that looked for an offset index used it (export_test.go).
	noLock        bool
	testIndexMin  int64
	testIndexHook func(indexUse)
}

// Store is a store of JSONL session files: pi's or indusagi's (one
// directory per cwd under <agentDir>/sessions) or any directory. It
// creates, opens, lists, resolves, forks, trashes and migrates sessions,
// and decides which files are its sessions (Files). It holds no open
// files; it is safe for concurrent use.
type Store struct {
	o        StoreOptions
	root     string // the directory of the store's session files, absolute
	agentDir string // the agent's directory; "" for a store opened on Dir
}

// OpenStore opens the store o names. It touches nothing on disk: a store
// whose directory does not exist yet lists no sessions, and its first
// Create makes the directory. It fails only when the agent's directory
// cannot be resolved from the environment.
func OpenStore(ctx context.Context, o StoreOptions) (*Store, error) {
	st := &Store{o: o}
	if o.Dir != "" {
		abs, err := filepath.Abs(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", o.Dir, err)
		}
		st.root = abs
		return st, nil
	}
	agent := o.AgentDir
	if agent == "" {
		var err error
		if agent, err = layout.AgentDir(o.Agent); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	abs, err := filepath.Abs(agent)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", agent, err)
	}
	st.agentDir = abs
	st.root = layout.SessionsDir(abs)
	return st, nil
}

// Dir returns the directory the store keeps its session files in: Dir,
// or the agent's <agentDir>/sessions.
func (st *Store) Dir() string { return st.root }

// Close releases the store. The store holds nothing open, so it only
// exists for symmetry with the sessions it opens, which stay open.
func (st *Store) Close() error { return nil }

// fs returns the store's filesystem.
func (st *Store) fs() vfs.FS { return orOS(st.o.FS) }

// options returns the session options of the store's sessions.
func (st *Store) options() options { return options{StoreOptions: st.o} }

// sessionDir returns the session directory of cwd: the store's Dir, or
// the agent's per-cwd directory.
func (st *Store) sessionDir(cwd string) string {
	if st.agentDir == "" {
		return st.root
	}
	return layout.DefaultSessionDir(st.agentDir, cwd)
}

// CreateOptions configure Store.Create.
type CreateOptions struct {
	// Dir is the directory of the new session's file; "" is the store's
	// directory for the cwd.
	Dir string
	// ID is the new session's id; "" draws one (StoreOptions.NewSessionID).
	// It must be usable as part of a file name.
	ID string
	// ParentSession is written as the header's parentSession: the session
	// is a child, such as a subagent's (see also Session.NewChild). ""
	// leaves it out.
	ParentSession string
	// WriteAtOnce writes the session's file at its first append, and
	// fsyncs it, instead of at its first user or assistant message (pi's rule),
	// so that the first prompt survives a crash. See Create for what pi
	// makes of such a file.
	WriteAtOnce bool
	// InMemory makes a session that never touches disk (pi's inMemory):
	// Dir, ParentSession and WriteAtOnce are ignored, and the store is
	// used only for its clock and ids.
	InMemory bool
}

// Create starts a new session for cwd, open for writing with its writer
// lock held until Close, in the store's directory for cwd (o.Dir
// otherwise), which is created. The file is named
// <timestamp>_<id>.jsonl, as pi names it. (An in-memory session of cwd ""
// takes the process working directory, as pi's inMemory does.)
//
// Nothing is written until the session holds an assistant message, as
// in pi: a session closed before then leaves nothing behind (not even its
// lock file). Flush writes it earlier, and o.WriteAtOnce writes it at the
// first append, header and entry synced to stable storage before the
// append returns, so that the prompt survives a crash of the agent. pi
// 0.73.1 lists such a file (its firstMessage is the prompt) and opens it
// with the prompt in its context. Resuming it, though, pi appends its
// next entries plainly only while it writes an assistant message first:
// if its first entry is another user message (a new prompt, a model
// change), its first user or assistant message after that writes the whole
// session into the file again, a second header and every entry once
// more (pi's duplicate-header bug, which 0.73.1 still has). pi then
// lists the session with its messages counted twice, though its context
// is right; sessctl reads it the same way. Resuming it with sessctl
// appends plainly.
func (st *Store) Create(ctx context.Context, cwd string, o CreateOptions) (*Session, error) {
	opts := st.options()
	if o.ID != "" {
		id := o.ID
		opts.NewSessionID = func() string { return id }
	}
	if o.InMemory {
		return inMemory(cwd, opts), nil
	}
	opts.Dir = o.Dir
	if opts.Dir == "" {
		opts.Dir = st.sessionDir(cwd)
	}
	opts.ParentSession = o.ParentSession
	opts.writeAtOnce = o.WriteAtOnce
	return create(ctx, cwd, opts)
}

// OpenOptions configure Store.Open, Store.ContinueRecent and OpenFile.
type OpenOptions struct {
	// ReadOnly opens without the writer lock and never writes the session
	// (only, for a large one, its offset index in the cache directory):
	// migration happens in memory, a torn tail is left alone, mutating
	// methods fail with ErrReadOnly.
	ReadOnly bool
	// Wait makes a write-mode open wait for the writer lock until its
	// context is done, instead of failing at once with ErrLocked.
	Wait bool
	// LockMode is recorded in the lock owner record ("write" by default).
	LockMode string
	// Cwd replaces the cwd taken from the header (pi 0.73.1's
	// open(path, sessionDir, cwdOverride)); without either the process
	// working directory is used, as pi does.
	Cwd string
	// Dir is the session directory, where NewSession and
	// CreateBranchedSession put new files: "" is the file's directory
	// (pi's open(path, sessionDir)).
	Dir string
	// Create makes an open of a path that does not exist start a new
	// session to be written there (pi's open), with Cwd (default: the
	// process working directory) as its cwd; the name is then always
	// taken as a path. Without it such a path is ErrNotFound.
	Create bool
	// NoBackup skips the <file>.v<N>.bak copy when a write migrates a
	// version 1 or 2 file.
	NoBackup bool
	// SkipChildSessions makes ContinueRecent pass over sessions whose
	// header has a parentSession (children, forks, branched sessions), so
	// that an agent does not resume its subagent's session. pi does not
	// skip them; the default is pi's rule.
	SkipChildSessions bool
}

// openOptions returns the session options of an open with o.
func (st *Store) openOptions(o OpenOptions) options {
	opts := st.options()
	opts.ReadOnly, opts.Wait, opts.LockMode, opts.Cwd = o.ReadOnly, o.Wait, o.LockMode, o.Cwd
	opts.Dir, opts.NoBackup, opts.SkipChildSessions, opts.create = o.Dir, o.NoBackup, o.SkipChildSessions, o.Create
	return opts
}

// Open opens the session name stands for: a path (see Resolve), a full
// session id or a unique prefix of one among the store's sessions. A
// path need not be in the store. The header's cwd becomes the session's
// cwd (o.Cwd overrides it).
//
// A write-mode open takes the session's writer lock and reads the file;
// it changes nothing in it. What the file needs before it can be
// appended to is done by the session's first write (an Append method,
// BranchWithSummary or Flush), after that call has checked its
// arguments, so a call that fails leaves the file as it was: a version 1
// or 2 file is migrated (rewritten atomically, the original kept as
// <file>.v<N>.bak; until then the session holds the migrated entries in
// memory, the same ones the rewrite writes), an empty file gets its
// header, a missing final newline is added, a torn last line is cut off
// (its bytes kept in <file>.torn-<time>), and temporary files that an
// interrupted sessctl write of this session left behind are removed.
// Before every write the session also reads what other processes (pi
// takes no lock) appended since, and never cuts a last line another
// process may still be writing (see StoreOptions.TornWait and ErrBusy). A
// read-only open does none of that and never writes.
//
// A file whose first JSON object is not a session header with a string id
// is corrupt: Open fails with a *CorruptError and the file is left alone
// (pi would truncate it). A path that does not exist is ErrNotFound
// unless o.Create asks for a new session there. A write-mode open of
// something that is not a regular file (a named pipe, a socket, a device,
// a directory, a symbolic link) is refused before the lock is taken, and
// one that fails to read the file removes the lock file it created: no
// lock file is left beside what is not a session.
func (st *Store) Open(ctx context.Context, name string, o OpenOptions) (*Session, error) {
	path := name
	if !o.Create && !st.isPath(name) {
		var err error
		if path, err = st.Resolve(ctx, name); err != nil {
			return nil, err
		}
	}
	return st.openPath(ctx, path, o)
}

// openPath opens the session file at path.
func (st *Store) openPath(ctx context.Context, path string, o OpenOptions) (*Session, error) {
	return open(ctx, path, st.openOptions(o))
}

// isPath reports whether a session name is a path: it has a path
// separator or the .jsonl suffix, or names a file that exists.
func (st *Store) isPath(name string) bool {
	if strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".jsonl") {
		return true
	}
	fi, err := st.fs().Stat(name)
	return err == nil && !fi.IsDir()
}

// OpenFile opens the session file at path: Store.Open of a path in a
// store with the default StoreOptions (the real filesystem and clock,
// fsync on every append), which needs no store to be found. A program
// that sets store options opens its files through its Store, whose Open
// takes paths too.
func OpenFile(ctx context.Context, path string, o OpenOptions) (*Session, error) {
	st := &Store{}
	return st.openPath(ctx, path, o)
}

// ContinueRecent opens the most recent session of cwd's directory in the
// store (pi's continueRecent: among the *.jsonl files whose first line is
// a session header with a string id, the one modified last) with cwd as
// its cwd, or creates a new session when there is none. With
// o.SkipChildSessions, sessions whose header names a parentSession are
// passed over.
func (st *Store) ContinueRecent(ctx context.Context, cwd string, o OpenOptions) (*Session, error) {
	opts := st.openOptions(o)
	opts.Dir, opts.create = st.sessionDir(cwd), false
	if st.agentDir == "" {
		opts.onlyCwd = cwd // the directory is every cwd's
	}
	return continueRecent(ctx, cwd, opts)
}

// listing returns o with the store's filesystem and cache directory.
func (st *Store) listing(o ListOptions) listing {
	return listing{ListOptions: o, FS: st.o.FS, CacheDir: st.o.CacheDir}
}

// List returns the sessions of cwd's directory in the store, newest
// modification first, as pi's SessionManager.list does; with cwd "" the
// sessions of every cwd: for an agent's store those of every per-cwd
// directory under <agentDir>/sessions (pi's listAll), for a store opened
// on a Dir every session file Files finds. Files that are not sessions
// (no header as first object) are left out, as pi leaves them out. A
// missing directory gives an empty list; nothing is created (pi creates
// the default directory): a listing writes nothing into the store, only
// its list index into the cache directory. For a store opened on a Dir,
// List with a cwd lists the sessions of that directory whose header cwd
// is cwd (pi 1.x's list(cwd, sessionDir)), every one with o.EveryCwd.
func (st *Store) List(ctx context.Context, cwd string, o ListOptions) ([]Info, error) {
	lo := st.listing(o)
	switch {
	case cwd != "" && st.agentDir == "" && !o.EveryCwd:
		infos, err := listDir(ctx, lo, st.sessionDir(cwd))
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(infos, func(in Info) bool { return !sameCwd(in.Cwd, cwd) }), nil
	case cwd != "":
		return listDir(ctx, lo, st.sessionDir(cwd))
	case st.agentDir != "":
		return listAll(ctx, lo, st.root)
	}
	return listTree(ctx, lo, st.root)
}

// Sessions returns an iterator over the sessions List returns, reading
// one file at a time, in path order: unlike List, nothing holds the whole
// listing and nothing is sorted, and the list index is not used. A file
// that cannot be read gives its error, and the iteration goes on; a
// missing directory gives nothing; a directory that cannot be read, or
// ctx done, gives the error and ends the iteration.
func (st *Store) Sessions(ctx context.Context, cwd string, o ListOptions) iter.Seq2[*Info, error] {
	if cwd != "" && st.agentDir == "" && !o.EveryCwd {
		return func(yield func(*Info, error) bool) {
			for i, err := range sessionsIn(ctx, st.fs(), st.sessionDir(cwd)) {
				if (err != nil || sameCwd(i.Cwd, cwd)) && !yield(i, err) {
					return
				}
			}
		}
	}
	if cwd != "" {
		return sessionsIn(ctx, st.fs(), st.sessionDir(cwd))
	}
	return st.allSessions(ctx)
}

// Resolve returns the path of the session file name stands for. A name
// with a path separator or the .jsonl suffix, or one that names an
// existing file, is a path: its absence is ErrNotFound, and a directory
// is an error. Any other name is a full session id, or a unique prefix
// of one (compared without regard to case or dashes), among the store's
// session files (see Files): the id in a file's header, or the one its
// name carries. An exact id wins over prefixes; a name that fits
// several sessions fails with an *AmbiguousError. When directories of
// the store could not be read, an unknown name fails naming the first of
// them rather than with ErrNotFound.
func (st *Store) Resolve(ctx context.Context, name string) (string, error) {
	return resolveIn(ctx, st.listing(ListOptions{}), st.root, name)
}

// ForkOptions configure Store.Fork.
type ForkOptions struct {
	// Branch copies one branch of the source, the root-to-leaf path,
	// instead of every entry (pi's forkFrom).
	Branch bool
	// At copies the root-to-At path instead (At is a full entry id or a
	// unique prefix, see Session.ResolveEntry); it implies Branch.
	At string
	// Cwd is the new session's working directory; "" keeps the source's.
	Cwd string
	// Dir is the directory of the new file. "" is the store's directory
	// for Cwd; without Cwd, the source's directory when the source is in
	// the store, and the store's directory for the source's cwd when it
	// is not.
	Dir string
}

// Fork writes a new session holding a copy of the session source names
// (see Resolve), and returns it open for writing with its lock held. Its
// header names the source file as its parentSession. The file is written
// at once: a fork is meant to be found on disk. The source is read, never
// written, and takes no lock.
//
// Without o.Branch and o.At every entry is copied, all branches, labels
// and names, in file order (pi's forkFrom). With them one path is: its
// label entries are dropped and re-created for the labels whose targets
// are on the path (pi's createBranchedSession). Unlike pi, a version 1 or
// 2 source is migrated (in memory) before it is copied, so the fork is a
// valid version 3 file; a source of a newer version than CurrentVersion
// is refused with a *VersionError.
func (st *Store) Fork(ctx context.Context, source string, o ForkOptions) (*Session, error) {
	path, err := st.Resolve(ctx, source)
	if err != nil {
		return nil, err
	}
	opts := st.options()
	if !o.Branch && o.At == "" {
		// The source's cwd (o.Cwd ""), read with the source.
		return forkFrom(ctx, path, o.Cwd, opts, func(cwd string) string { return st.forkDir(path, cwd, o) })
	}
	src, err := st.openPath(ctx, path, OpenOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var leaf string
	if o.At != "" {
		if leaf, err = src.ResolveEntry(o.At); err != nil {
			return nil, fmt.Errorf("fork %s: %w", path, err)
		}
	} else {
		id, ok := src.LeafID()
		if !ok {
			return nil, fmt.Errorf("fork %s: the session has no entries to fork", path)
		}
		leaf = id
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = src.Cwd()
	}
	return src.forkBranch(ctx, leaf, o.Cwd, st.forkDir(path, cwd, o), opts)
}

// TrashOptions configure Store.Trash.
type TrashOptions struct {
	// Wait waits for the session's writer lock until ctx is done, instead
	// of failing at once with ErrLocked.
	Wait bool
}

// Trash moves the session name stands for (see Resolve) into the store's
// trash, <store>/.trash/<time>/ keeping its folder below the store (a
// file outside the store goes to .trash/<time>/ beside it), together with
// the files sessctl keeps beside it for that session: migration backups,
// quarantined torn tails and the temporary files an interrupted write
// left. It returns what it moved, the session file first. The trash is
// left out of listings, lookups and walks.
//
// It holds the session's writer lock while it moves them, so it fails
// with ErrLocked while another sessctl writer has the session open. pi
// takes no lock: a pi process working on the session is not detected,
// and keeps appending to the moved file (or, when it starts, creates a
// new one at the old path). After the move the lock file and its owner
// record are removed while the lock is still held. A file already in the
// trash is never replaced. The session file is moved first, so an error
// part-way leaves the session deleted and only some of its backups
// behind.
func (st *Store) Trash(ctx context.Context, name string, o TrashOptions) ([]TrashedFile, error) {
	path, err := st.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("trash %s: %w", path, err)
	}
	opts := st.options()
	opts.LockMode, opts.Wait = "delete", o.Wait
	return trash(ctx, abs, sessionfile.TrashDir(st.root, abs, opts.now()), opts)
}

// Migrate upgrades the version 1 or 2 session file name stands for (see
// Resolve) to version 3 in place, streaming it (memory is bounded by its
// longest line), under the session's writer lock: see migrate.File for
// the atomic replacement, the backup and the original's mode, owner and
// group, which the new file keeps. The header is read first, without the
// lock: version 3 files are left alone and never locked (no lock file is
// created for them); newer versions are refused with a *VersionError; a
// file without a valid header is refused with a *CorruptError; a file
// that may not be rewritten (read-only, or not writable by the caller)
// is refused before the lock is taken. All of these leave the file
// untouched. Every error names the file. Temporary files an interrupted
// earlier run left are removed once the lock is held.
func (st *Store) Migrate(ctx context.Context, name string, o MigrateOptions) (migrate.FileResult, error) {
	path := name
	if !st.isPath(name) {
		var err error
		if path, err = st.Resolve(ctx, name); err != nil {
			return migrate.FileResult{Path: name}, err
		}
	}
	return migrateFile(ctx, path, o, st.options())
}

// File is a session file of a store, as Store.Files finds it.
type File struct {
	// Path is the store's directory joined with the file's place below
	// it.
	Path string
	// Link is set when the name is a symbolic link. The walk does not
	// follow it; readers may read through it (pi lists such files), but
	// writers refuse it (vfs.ErrSymlink).
	Link bool
}

// Files returns an iterator over the session files of the store, in
// path order: the one walk that decides what belongs to a store, which
// listing a store's tree, id lookup, verification, statistics,
// migration, search and sync all use, so that they agree on its files.
//
//   - A session file is a name ending in ".jsonl" that is a regular file
//     or a symbolic link, in the store's directory or any directory below
//     it. sessctl's own files beside a session never end so, and are
//     never session files: migration backups (<file>.v<N>.bak),
//     quarantined torn tails (<file>.torn-<ms>), temporary files
//     (<name>.tmp-<hex>), the lock (<file>.lock) and its owner record
//     (<file>.owner).
//   - Directories named ".trash" below the store's directory, where
//     deleted sessions are kept, are left out. Symbolic links to
//     directories are not followed.
//   - What had to be left out is yielded as an error with the File that
//     names it, and the walk goes on: a name ending in ".jsonl" that is a
//     named pipe, socket or device (an *fs.PathError matching
//     vfs.ErrNotRegular), a directory below the store's that could not be
//     read (the error of reading it).
//
// An error with an empty File ends the walk: the store's directory itself
// cannot be read (matching fs.ErrNotExist when it is missing), or ctx is
// done.
func (st *Store) Files(ctx context.Context) iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		files, skipped, err := storeFiles(ctx, st.fs(), st.root)
		if err != nil {
			yield(File{}, err)
			return
		}
		yieldWalk(files, skipped, yield)
	}
}

// Tail reads the last n entries of the session file name stands for (see
// Resolve), as a read-only Open would give them (the same entries, lines
// that are not entries skipped, a complete last entry without its
// newline included, a torn last line left out), reading the file
// backwards from its end, so that memory and time are bounded by the
// lines returned, not the file. The entries' Line is 0 (it would take
// reading the whole file). Tail.Follow gives what is appended after them.
//
// A file that does not begin with a version 3 session header (version 1
// or 2, migrated in memory; a damaged or missing header; blank lines or a
// byte order mark before it) is read whole with a read-only Open
// instead, with Open's errors. It never writes and takes no lock.
func (st *Store) Tail(ctx context.Context, name string, n int) (*Tail, error) {
	path := name
	if !st.isPath(name) {
		var err error
		if path, err = st.Resolve(ctx, name); err != nil {
			return nil, err
		}
	}
	if _, err := st.fs().Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open session %s: %w", path, ErrNotFound)
	}
	return openTail(ctx, path, n, st.openOptions(OpenOptions{ReadOnly: true}))
}

// Info returns the listing fields of the session name stands for (see
// Resolve), as List gives them, read from the file as it is on disk
// (before any migration, as pi's list reads it). A file that is not a
// session (no header as its first object, which List leaves out) is an
// error wrapping ErrCorrupt.
func (st *Store) Info(ctx context.Context, name string) (*Info, error) {
	path := name
	if !st.isPath(name) {
		var err error
		if path, err = st.Resolve(ctx, name); err != nil {
			return nil, err
		}
	}
	in, err := readInfo(st.fs(), path)
	switch {
	case errors.Is(err, errNotSession):
		return nil, &CorruptError{Path: path, Err: errors.New("no session header: the first JSON object is not a session header")}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("session file %s: %w", path, ErrNotFound)
	case err != nil:
		return nil, err
	}
	return in, nil
}
