package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// Session is one JSONL session tree, the counterpart of pi's
// SessionManager. It is safe for concurrent use. A session opened for
// writing holds the session's writer lock until Close.
type Session struct {
	mu   sync.Mutex
	opts options

	cwd     string
	dir     string // sessionDir; "" in memory
	file    string // sessionFile; "" in memory
	persist bool

	header Entry // the first header line
	ix     *tree.Index

	// onDisk is true once the file exists with this session's header;
	// unwritten is the position in ix.Entries() of the first entry not yet
	// on disk. A new session stays in memory until it has an assistant
	// message (pi's rule); after that every append is written at once.
	onDisk          bool
	unwritten       int
	hasConversation bool

	f          vfs.File      // read-write append handle, open while the file exists and we write
	fileID     fs.FileInfo   // identity of the file we append to
	disk       diskState     // what we know of the file's bytes (write mode)
	leafMoved  bool          // Branch or ResetLeaf moved the leaf off the last entry
	chainOK    string        // an entry key whose parent chain is known to end (no loop)
	gen        uint64        // counts changes of the index read from the file
	writeEr    error         // sticky: set by a failed write or sync
	wrote      bool          // this session wrote to its file (the list index needs refreshing)
	checkedAt  time.Time     // when the file's identity was last checked
	caughtUpAt time.Time     // when the session last caught up with its file
	rng        *rand.ChaCha8 // draws entry ids; seeded once per session
	slab       []Entry       // storage for appended entries
	lines      []byte        // storage for the bytes of appended lines
	msgRoom    int           // room to ask for a typed message: about the recent ones' size
	lastMs     int64         // the millisecond lastTs formats
	lastTs     string
	closed     bool

	lk *lock.Lock // the writer lock; nil without one
	// dropLock makes Close remove the lock file even though the session
	// file exists: a fork written for ForkFile is not kept open.
	dropLock bool
	lease    WriterLease // the lease on the remote (Leaser); nil without one

	shipped bool // the Replicator was told of a write

	recovery Recovery
}

// Recovery reports what the session repaired in its file. A write-mode
// open repairs nothing: the repairs are made by the first write (or Flush),
// after the call's arguments were checked, so Recovery is the zero value
// (but for Malformed) until then.
type Recovery struct {
	// Migrated is true when the file was upgraded from an older version;
	// Backup names the copy of the original, if one was kept.
	Migrated    bool
	FromVersion float64
	Backup      string
	// NewlineAdded is true when the last line was a complete entry without
	// '\n' and got its newline.
	NewlineAdded bool
	// TornBytes is the size of an unfinished last line that was cut off
	// (the last one, if several were); Quarantine names the file that
	// keeps those bytes.
	TornBytes  int
	Quarantine string
	// Initialized is true when an empty file got a fresh header.
	Initialized bool
	// Malformed counts lines that are not JSON objects, found when the
	// file was read (and in lines other processes appended later). They
	// are skipped when reading and left where they are.
	Malformed int
}

// Recovery returns what opening the session repaired.
func (s *Session) Recovery() Recovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recovery
}

// newState resets s to a fresh session with the given header.
func (s *Session) newState(header []byte) {
	h, err := jsonl.ParseEntry(header)
	if err != nil {
		panic("engine: bad header line: " + err.Error())
	}
	s.header = h
	s.ix = tree.Build(nil)
	s.onDisk = false
	s.unwritten = 0
	s.hasConversation = false
}

// create starts a new session for cwd in opts.Dir, which is created, a
// child of opts.ParentSession when it is set (see Store.Create). The
// writer lock on the future file is taken at once, and its lock file is
// removed again by Close when the file was never written.
func create(ctx context.Context, cwd string, opts options) (*Session, error) {
	dir, err := opts.sessionDir()
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	s := &Session{opts: opts, cwd: layout.ResolvePath(cwd), dir: dir, persist: true}
	var parent *string
	if opts.ParentSession != "" {
		parent = &opts.ParentSession
	}
	if err := s.startNew(ctx, opts.sessionID(), parent); err != nil {
		return nil, err
	}
	return s, nil
}

// inMemory returns a session that never touches disk (pi's inMemory).
func inMemory(cwd string, opts options) *Session {
	if cwd == "" {
		cwd = processCwd()
	}
	cwd = layout.ResolvePath(cwd)
	s := &Session{opts: opts, cwd: cwd, persist: false}
	now := opts.now()
	s.newState(jsonl.NewHeaderLine(opts.sessionID(), now, cwd, nil))
	return s
}

// startNew replaces the state with a new session (id, now) whose file goes
// into the session directory, taking that file's lock.
func (s *Session) startNew(ctx context.Context, id string, parent *string) error {
	now := s.opts.now()
	s.newState(jsonl.NewHeaderLine(id, now, s.cwd, parent))
	if !s.persist {
		s.file = ""
		return nil
	}
	if err := layout.CheckName(id); err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	file := filepath.Join(s.dir, layout.SessionFileName(now, id))
	if err := s.switchFile(ctx, file); err != nil {
		return err
	}
	return nil
}

// switchFile releases the current file (handle and lock) and locks file.
func (s *Session) switchFile(ctx context.Context, file string) error {
	if err := s.closeFile(); err != nil {
		return err
	}
	s.file = file
	s.writeEr = nil
	s.disk = diskState{}
	s.leafMoved = false
	s.chainOK = ""
	if s.opts.ReadOnly || s.opts.noLock {
		return nil
	}
	lk, err := acquire(ctx, file, s.opts)
	if err != nil {
		return err
	}
	s.lk = lk
	if err := s.takeLease(ctx); err != nil {
		_, _ = s.lk.Remove()
		s.lk = nil
		return err
	}
	return nil
}

// closeFile closes the append handle and releases the lock, after
// refreshing the file's list index entry if this session wrote to it. The
// lock file of a session whose file was never written is removed while
// the lock is still held, so that trying a command on a new path leaves
// nothing behind.
func (s *Session) closeFile() error {
	var err error
	if s.f != nil && s.wrote && s.writeEr == nil {
		// A SyncNone writer checks its file's identity only now and then:
		// report appends that went to a removed or replaced file.
		if err = s.checkIdentity(); err == nil {
			s.refreshIndex()
		}
	} else if s.wrote && s.writeEr == nil {
		s.refreshIndex()
	}
	s.wrote = false
	if s.f != nil {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		s.f = nil
		s.fileID = nil
	}
	// The lease goes first (once what was written is shipped), while the
	// local lock still keeps this machine's other writers out.
	if lerr := s.releaseLease(); err == nil {
		err = lerr
	}
	if s.lk != nil {
		var rerr error
		if _, lerr := s.opts.fs().Lstat(s.file); errors.Is(lerr, fs.ErrNotExist) || s.dropLock {
			_, rerr = s.lk.Remove()
		} else {
			rerr = s.lk.Close()
		}
		if err == nil {
			err = rerr
		}
		s.lk = nil
	}
	return err
}

// open opens the session file at path (see Store.Open). A path that
// does not exist is ErrNotFound, checked before any lock is taken, unless
// opts.create asks for a new session there.
func open(ctx context.Context, path string, opts options) (*Session, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	fsys := opts.fs()
	s := &Session{opts: opts, file: abs, persist: true}
	s.dir = filepath.Dir(abs)
	if opts.Dir != "" {
		if s.dir, err = filepath.Abs(opts.Dir); err != nil {
			return nil, err
		}
		if !opts.ReadOnly {
			if err := vfs.MkdirAllSync(fsys, s.dir, vfs.DirMode); err != nil {
				return nil, fmt.Errorf("open session %s: %w", path, err)
			}
		}
	}
	fi, err := fsys.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) && !opts.create {
		// No silent new history: a mistyped path is not found, and
		// leaves nothing behind (no lock file).
		return nil, fmt.Errorf("open session %s: %w", path, ErrNotFound)
	}
	if err == nil && !opts.ReadOnly {
		// A writer never follows a symbolic link it did not create: the
		// path might point anywhere.
		// Nor does it lock, let alone write, anything beside what is not
		// a session file (a pipe, a socket, a device, a directory).
		if err := checkKind(fi); err != nil {
			return nil, fmt.Errorf("open session %s for writing: %w", abs, err)
		}
	}
	freshLock := false
	if !opts.ReadOnly && !opts.noLock {
		_, lerr := fsys.Lstat(sessionfile.LockPath(abs))
		freshLock = errors.Is(lerr, fs.ErrNotExist)
		lk, err := acquire(ctx, abs, opts)
		if err != nil {
			return nil, err
		}
		s.lk = lk
		if err := s.takeLease(ctx); err != nil {
			if freshLock {
				_, _ = s.lk.Remove()
			} else {
				_ = s.lk.Close()
			}
			s.lk = nil
			return nil, err
		}
	}
	if err := s.load(ctx); err != nil {
		if freshLock {
			// Not a session after all (a bad header, another program's
			// JSONL): take away the lock file this open made beside it.
			_, _ = s.lk.Remove()
			s.lk = nil
		}
		_ = s.closeFile()
		return nil, err
	}
	return s, nil
}

// load reads s.file into the session state. It writes nothing: a write-
// mode session records in s.disk what its first write must do.
func (s *Session) load(context.Context) error {
	fsys := s.opts.fs()
	s.disk = diskState{}
	var (
		data  []byte
		ident fs.FileInfo
		p     *jsonl.Parsed
		keep  func() // writes the offset index, once the session has indexed p
		err   error
	)
	if s.opts.ReadOnly {
		data, ident, p, keep, err = s.readIndexed()
	} else {
		data, err = vfs.ReadFileRoom(fsys, s.file, migrationRoom)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !s.opts.create {
			return fmt.Errorf("open session %s: %w", s.file, ErrNotFound)
		}
		// pi: a fresh session that will be written at this path.
		s.cwd = s.opts.Cwd
		if s.cwd == "" {
			s.cwd = processCwd()
		}
		s.cwd = layout.ResolvePath(s.cwd)
		s.newState(jsonl.NewHeaderLine(s.opts.sessionID(), s.opts.now(), s.cwd, nil))
		return nil
	}
	if err != nil {
		return fmt.Errorf("open session: %w", err)
	}
	var canon []bool
	if !s.opts.ReadOnly {
		if ident, err = fsys.Lstat(s.file); err != nil {
			return fmt.Errorf("open session %s: %w", s.file, err)
		}
		if firstNeedsMigration(data) {
			// The migration below needs to know which lines are
			// canonical: found in the same pass as the parse.
			p, canon = jsonl.ParseFileCanonical(data)
		} else {
			p = jsonl.ParseFile(data)
		}
	}
	if err := s.loadParsed(data, p, canon, ident); err != nil {
		return err
	}
	if keep != nil {
		keep()
	}
	return nil
}

// firstNeedsMigration reports whether data starts with a session header
// of a version that is migrated. It only chooses how the file is parsed:
// a header it misses (after blank lines, say) is migrated all the same.
func firstNeedsMigration(data []byte) bool {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i]
	}
	e, err := jsonl.ParseEntry(line)
	return err == nil && e.IsHeader() && migrate.Needed(migrate.VersionOf(&e))
}

// migrationRoom is the room a write-mode open reads a file with: room
// for its migration in place (see migrate.InPlace) when it starts with a
// header of a version that is migrated, none otherwise. A version 1 line
// grows by its id and parentId, 38 bytes: a quarter of the file is room
// for lines of 152 bytes and more; a file it does not fit is migrated
// into a new buffer.
func migrationRoom(head []byte, size int64) int {
	if !firstNeedsMigration(head) || size > math.MaxInt/2 {
		return 0
	}
	return int(size/4) + 64<<10
}

// loadParsed is load after the file was read (data, its Lstat ident) and
// parsed (p; canon, when not nil, says which entries are canonical).
func (s *Session) loadParsed(data []byte, p *jsonl.Parsed, canon []bool, ident fs.FileInfo) error {
	// A read-only session's ident is the Stat readIndexed took, for
	// Refresh; it follows links as the read did.
	s.recovery.Malformed = len(p.Malformed)
	if len(p.Entries) == 0 && len(p.Malformed) == 0 && p.Tail != jsonl.TailTorn {
		// An empty (or whitespace-only) file gets a fresh header, as in
		// pi; a write-mode session writes it at its first write.
		s.cwd = s.opts.Cwd
		if s.cwd == "" {
			s.cwd = processCwd()
		}
		s.cwd = layout.ResolvePath(s.cwd)
		s.newState(jsonl.NewHeaderLine(s.opts.sessionID(), s.opts.now(), s.cwd, nil))
		if !s.opts.ReadOnly {
			s.disk = diskState{loaded: true, ident: ident, size: int64(len(data)), empty: true}
			s.onDisk = true
		}
		return nil
	}
	if err := checkHeader(s.file, p); err != nil {
		return err
	}
	hdr := jsonl.ParseHeader(p.Entries[0])
	s.cwd = s.opts.Cwd
	if s.cwd == "" {
		if hdr.HasCwd {
			s.cwd = hdr.Cwd
		} else {
			s.cwd = processCwd()
		}
	}
	// pi 1.x resolves the cwd it is given or reads (a relative or "~"
	// one, "" included, against the process's directory).
	s.cwd = layout.ResolvePath(s.cwd)
	version := migrate.VersionOf(&p.Entries[0])
	if version > CurrentVersion && !s.opts.ReadOnly {
		return &VersionError{Path: s.file, Found: version, Max: CurrentVersion}
	}
	entries := p.Entries
	// A read-only session keeps the same record, for Refresh.
	disk := loadedState(data, p, ident)
	var mem *migrate.Memory
	if migrate.Needed(version) {
		// In memory only; the first write rewrites the file with the
		// bytes made here (see migrateFile). A write-mode session builds
		// them in the memory of the bytes read, when they have room.
		disk.tail = bytes.Clone(disk.tail)
		var (
			m       *migrate.Memory
			inPlace bool
			err     error
		)
		if canon != nil && !s.opts.ReadOnly {
			m, inPlace, err = migrate.InPlace(data, entries, canon)
		}
		if err == nil && !inPlace {
			m, err = migrate.InMemory(entries, canon)
		}
		if err != nil {
			return &CorruptError{Path: s.file, Err: err}
		}
		entries = m.Entries
		if !s.opts.ReadOnly {
			mem = m
		}
	}
	s.index(entries)
	s.onDisk = true
	s.unwritten = s.ix.Len()
	s.disk = disk
	if migrate.Needed(version) {
		s.disk.migrateFrom = version
		s.disk.migrated = mem
	}
	return nil
}

// checkHeader returns a *CorruptError unless the first JSON object of the
// file is a session header with a string id.
func checkHeader(path string, p *jsonl.Parsed) error {
	if len(p.Entries) == 0 {
		bad := p.Malformed[0]
		return &CorruptError{Path: path, Line: bad.Line, Offset: bad.Offset,
			Err: fmt.Errorf("no session header: %w", bad.Err)}
	}
	first := &p.Entries[0]
	switch {
	case !first.IsHeader():
		return &CorruptError{Path: path, Line: first.Line, Offset: first.Offset,
			Err: errors.New("no session header: the first entry is not of type \"session\"")}
	case first.IDKind != KindString:
		return &CorruptError{Path: path, Line: first.Line, Offset: first.Offset,
			Err: errors.New("session header has no string id")}
	}
	return nil
}

// index builds the in-memory state from parsed (and migrated) lines.
func (s *Session) index(entries []Entry) {
	s.header = entries[0]
	s.ix = tree.Build(entries[1:]) // later header lines are skipped, as in pi
	s.hasConversation = false
	for _, e := range s.ix.Entries() {
		if isConversation(e) {
			s.hasConversation = true
			break
		}
	}
}

// Close releases the writer lock and the file. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.closeFile()
	shipped, file := s.shipped, s.file
	s.mu.Unlock()
	if shipped {
		s.opts.Replicator.Closed(file)
	}
	return err
}

// ---- getters ----

func (s *Session) check() error {
	if s.closed {
		return ErrClosed
	}
	return nil
}

// SessionID returns the session id (the header's id).
func (s *Session) SessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header.ID
}

// SessionFile returns the session file path, or "" in memory.
func (s *Session) SessionFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.file
}

// Cwd returns the session's working directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// IsPersisted reports whether the session is backed by a file.
func (s *Session) IsPersisted() bool { return s.persist }

// Header returns the session header.
func (s *Session) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return jsonl.ParseHeader(*copyEntry(&s.header))
}

// Entries returns every entry in file order (headers excluded, duplicates
// included). They are copies: changing them changes nothing in the
// session.
func (s *Session) Entries() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyEntries(s.ix.Entries())
}

// Entry returns (a copy of) the entry with id.
func (s *Session) Entry(id string) (*Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ix.Get(id)
	return copyEntry(e), ok
}

// LeafID returns the id of the current leaf entry (pi's getLeafId); ok
// is false when the leaf is no entry: null (an empty session, or after
// ResetLeaf) or, in a file whose last line has no id, undefined (Index
// tells those apart: tree.Index.Leaf).
func (s *Session) LeafID() (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, kind := s.ix.Leaf()
	if kind != KindString {
		return "", false
	}
	return id, true
}

// BranchPath returns (copies of) the root-to-entry path of id, or of the
// leaf when id is "" (pi's getBranch).
func (s *Session) BranchPath(id string) []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		return copyEntries(s.ix.LeafBranch())
	}
	return copyEntries(s.ix.Branch(id))
}

// Children returns the ids of the entries whose parent is id.
func (s *Session) Children(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ix.Children(id)...)
}

// Tree returns pi's getTree; the nodes hold copies of the entries.
func (s *Session) Tree() []*tree.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyTree(s.ix.Tree())
}

// Label returns the label of an entry id.
func (s *Session) Label(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ix.Label(id)
}

// Name returns the session name: the trimmed name of the last
// session_info entry; false when there is none or an empty name cleared
// it.
func (s *Session) Name() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ix.Name()
}

// Context builds the model context at the current leaf (pi's
// buildSessionContext()). Its messages and entries are copies. The
// context gives the messages as types (Context.TypedMessages), the model
// (Context.CurrentModel) and the thinking level (Context.Thinking).
func (s *Session) Context() compaction.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyContext(compaction.Build(s.ix, compaction.IndexLeaf(s.ix)))
}

// ContextAt builds the context for an explicit leaf.
func (s *Session) ContextAt(leaf compaction.Leaf) compaction.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyContext(compaction.Build(s.ix, leaf))
}

// Index gives f the session's index under the session's lock, for readers
// that need several answers at once without copies. f must not keep the
// index nor change its entries (their bytes are the session's).
func (s *Session) Index(f func(ix *tree.Index)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.ix)
}

// isConversation reports whether e is a message entry with role user or
// assistant: pi 1.x writes a new session's file at the first one (0.73.1
// waited for the first assistant message).
func isConversation(e *Entry) bool {
	return e.Type == jsonl.TypeMessage && e.Message() != nil && (e.Role == "user" || e.Role == "assistant")
}

// checkKind refuses, by its Lstat, a path that cannot be a session file
// to write: a symbolic link (vfs.ErrSymlink), a directory (EISDIR), or a
// named pipe, socket or device (vfs.ErrNotRegular).
func checkKind(fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return vfs.ErrSymlink
	case m.IsDir():
		return syscall.EISDIR
	case !m.IsRegular():
		return vfs.ErrNotRegular
	}
	return nil
}
