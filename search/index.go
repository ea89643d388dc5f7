package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (cgo-free, FTS5 compiled in)
)

// schemaVersion is stored in every shard; a shard of another version is
// deleted and built again.
const schemaVersion = "3"

// Shards is the number of database files an index is split into: files
// are spread over them by session, so a first build runs on several
// CPUs (SQLite writes one database from one thread at a time).
const Shards = 4

// tokenizer is FTS5's tokenizer for the index and for snippets: Unicode
// word characters, case and diacritics folded.
const tokenizer = `unicode61 remove_diacritics 2`

// ErrQuery is matched by the error of a query the FTS5 syntax does not
// accept.
var ErrQuery = errors.New("bad search query")

// Options configure Open. The zero value keeps the index in the user's
// cache directory.
type Options struct {
	// Dir is the index directory; "" means <user cache dir>/sessctl/search
	// ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
	// %LocalAppData% on Windows). It is created 0700 at the first search.
	// A directory inside a session store is refused (see Open).
	Dir string
	// NoIndex searches without an index: every file of the stores is read
	// at each search and nothing is written. Dir is not used.
	NoIndex bool
	// Rebuild deletes the index and builds it again at the first search,
	// once the searches other processes have under way are done.
	Rebuild bool
	// Progress, when not nil, is called while the index is brought up to
	// date with the bytes indexed so far and the bytes to index, from one
	// goroutine at a time. It is not called when nothing needs indexing.
	Progress func(done, total int64)
	// Watch keeps a watch on the directories of the stores searched
	// (inotify; on Linux, ignored elsewhere) for as long as the Index is
	// open, so that a search that finds nothing changed since the last
	// one found the index current skips the walk of the stores and the
	// update, and only queries: for a process that keeps one Index and
	// searches again and again (sessctl serve). Any event in a watched
	// directory, another process writing the index, a store holding a
	// symbolic link or more than 20,000 directories, or a file that
	// could not be read makes the next search walk and update as without
	// Watch. A file changed through a path outside the watched
	// directories (a hard link elsewhere, another machine writing to a
	// network filesystem) is not seen until something in its directory
	// changes. The watch takes no CPU while nothing happens. Close ends
	// it.
	Watch bool
	// Warn, when not nil, is told about each file or directory of a store
	// that could not be read (the error names it), once per search. Such
	// files are left out. It is called from one goroutine at a time.
	Warn func(err error)
	// FS is the filesystem the index's files (its directory, locks,
	// state and caches) and the session files indexed and shown are
	// read and written through; nil means vfs.OS(). SQLite opens the
	// databases by path and the index locks are kernel locks, so it must
	// be the real filesystem or a wrapper of it (vfstest.FaultFS).
	FS vfs.FS
	// Engine is the index kept: EngineFTS5 (SQLite FTS5) or EngineOwn
	// (sessctl's own, in Dir/own). EngineDefault is EngineOwn.
	// The two keep separate files in Dir and share its lock.
	Engine Engine
}

// ErrIndex is matched by the error of a search that could not use its
// index (open, read, update or rebuild it): the search did not run to
// its end, so its hits are unknown. Options.NoIndex searches without one.
var ErrIndex = errors.New("search index failed")

// indexError marks an error of the index as matching ErrIndex, keeping
// its message.
type indexError struct{ err error }

func (e *indexError) Error() string   { return e.err.Error() }
func (e *indexError) Unwrap() []error { return []error{e.err, ErrIndex} }

// Index is a full-text index of session stores. It is safe for use by
// one goroutine at a time; several processes may use the same index
// directory at once. It holds no file open between searches: each search
// opens the index's databases, under the index lock (see lock.go), for
// its update and query, and closes them before the first hit.
type Index struct {
	o       Options
	dir     string
	lock    *indexLock // held while shards are open
	shards  []*shard
	rebuilt bool // Options.Rebuild was done
	warnMu  sync.Mutex
	warned  map[string]bool // what this search reported, so each is told once

	w       *watcher     // Options.Watch
	clean   cleanState   // the last search that found the index current, as w saw it
	walked  *walkedState // the files of the last walk, as w saw them (own engine)
	dirs    *dirCache    // the kept listings the search's walk went through, if any
	stCache *stateCache  // the own engine's state, kept with a watch
	readSt  *stateCache  // the state a search read under the lock shared and found behind, for its update

	ownMerge *ownMerger   // EngineOwn: a merge left running by the last search
	ids      *idCache     // EngineOwn: the ids the last search shortened among
	hitIDs   *shortid.Set // EngineOwn: the ids this search shortens among
	planned  int          // EngineOwn: the files the last plan looked at (tests)
}

// cleanState records a search that found the index current (Watch): the
// stores it searched, the watch's event count when it began, and the
// shards' generations after it.
type cleanState struct {
	ok   bool
	key  string
	gen  uint64
	tags []string
}

type shard struct {
	path string
	db   *sql.DB
}

// Open returns the index in o.Dir. Nothing is created, opened or
// indexed until the first Search. A directory that is or is inside an
// agent's session store (pi's or indusagi's agent directory, AgentUse's
// data directory) is refused with an error matching fs.ErrInvalid, and
// so is, by Search, one inside a store it searches: the index is never
// kept in a store. With o.NoIndex no index is used.
func Open(ctx context.Context, o Options) (*Index, error) {
	if o.Engine == EngineDefault {
		o.Engine = defaultEngine
	}
	x := &Index{o: o}
	if o.NoIndex {
		return x, nil
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = defaultDir(); err != nil {
			return nil, err
		}
	}
	x.dir = dir
	if err := checkIndexDir(dir, nil); err != nil {
		return nil, err
	}
	if o.Watch {
		x.w, _ = newWatcher() // none: every search walks, as without Watch
	}
	return x, nil
}

// fsys is Options.FS, or the real filesystem.
func (x *Index) fsys() vfs.FS {
	if x.o.FS == nil {
		return vfs.OS()
	}
	return x.o.FS
}

// Dir returns the index directory ("" with NoIndex).
func (x *Index) Dir() string { return x.dir }

// Close releases the index. A search holds its files and lock only
// until its first hit, so after a search Close has nothing left to do
// but wait for a merge of EngineOwn's segments that it left running.
func (x *Index) Close() error {
	err := x.waitOwnMerge()
	if x.w != nil {
		if werr := x.w.close(); err == nil {
			err = werr
		}
		x.w, x.clean, x.walked, x.stCache = nil, cleanState{}, nil, nil
	}
	if x.lock == nil {
		return err
	}
	x.closeShards()
	if rerr := x.lock.release(); err == nil {
		err = rerr
	}
	x.lock = nil
	return err
}

// use runs fn with the index lock held shared and every shard open, and
// closes them after. The index directory is created at the first use; it
// must not be inside one of stores (or an agent's store).
func (x *Index) use(ctx context.Context, stores []layout.Place, fn func() error) (err error) {
	if err := checkIndexDir(x.dir, stores); err != nil {
		return err
	}
	defer func() {
		if err != nil && !errors.Is(err, ErrQuery) && ctx.Err() == nil && !errors.Is(err, ErrIndex) {
			err = &indexError{err}
		}
	}()
	if err := x.fsys().MkdirAll(x.dir, vfs.DirMode); err != nil {
		return fmt.Errorf("open search index %s: %w", x.dir, err)
	}
	lk, err := lockShared(ctx, x.fsys(), x.dir)
	if err != nil {
		return err
	}
	x.lock = lk
	defer func() {
		x.closeShards()
		// What this process wrote is recorded as sessctl's (state.go); a
		// failure costs a rebuild at the next search, nothing else.
		if lk.held {
			x.saveState(context.WithoutCancel(ctx))
		}
		if rerr := lk.release(); err == nil {
			err = rerr
		}
		x.lock = nil
	}()
	untrusted, err := x.untrusted(ctx)
	switch {
	case err != nil:
		return err
	case x.o.Rebuild && !x.rebuilt:
		if err := x.repair(ctx, nil, true); err != nil {
			return err
		}
		x.rebuilt = true
	case untrusted:
		// Changed since sessctl recorded it, or by a search under way:
		// repair looks again once the others are done.
		if err := x.repair(ctx, nil, false); err != nil {
			return err
		}
	default:
		bad, err := x.openShards(ctx)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			if err := x.repairDamaged(ctx, bad); err != nil {
				return err
			}
		}
	}
	return fn()
}

func (x *Index) closeShards() {
	for _, s := range x.shards {
		if s != nil && s.db != nil {
			s.db.Close()
		}
	}
	x.shards = nil
}

func (x *Index) shardPath(i int) string {
	return filepath.Join(x.dir, fmt.Sprintf("index-%d.db", i))
}

// warn tells Options.Warn about err, once per search: a directory of
// session files is walked for both formats and would be reported twice.
func (x *Index) warn(err error) {
	x.warnMu.Lock()
	defer x.warnMu.Unlock()
	if x.warned[err.Error()] {
		return
	}
	if x.warned == nil {
		x.warned = map[string]bool{}
	}
	// Recorded even when nobody is told: a search that left something
	// out never lets the next one skip the walk (Options.Watch).
	x.warned[err.Error()] = true
	if x.o.Warn != nil {
		x.o.Warn(err)
	}
}

// shardOf returns the shard of a session (its file, or its AgentUse
// directory).
func shardOf(session string) int {
	h := fnv.New32a()
	h.Write([]byte(session))
	return int(h.Sum32() % Shards)
}

const schema = `
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	format INTEGER NOT NULL,
	sid TEXT NOT NULL DEFAULT '',
	name TEXT NOT NULL DEFAULT '',
	cwd TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS files(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	session INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	ino INTEGER NOT NULL,
	ctime INTEGER NOT NULL,
	iend INTEGER NOT NULL,
	tail_off INTEGER NOT NULL,
	tail_crc INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS docs(
	id INTEGER PRIMARY KEY,
	file INTEGER NOT NULL,
	session INTEGER NOT NULL,
	off INTEGER NOT NULL,
	len INTEGER NOT NULL,
	part INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	tool TEXT NOT NULL,
	ts INTEGER NOT NULL,
	entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, content='', contentless_delete=1, tokenize='` + tokenizer + `');
`

// errMissing is a shard whose file does not exist yet.
var errMissing = errors.New("search index file missing")

// errStale is a shard of another schema version.
var errStale = errors.New("search index of another version")

// openShards opens every shard with the index lock held shared, when
// nothing may be created or deleted. It returns the shards whose files
// are missing, damaged or of another version: they need the lock
// exclusive (repairDamaged).
func (x *Index) openShards(ctx context.Context) (map[int]bool, error) {
	bad := map[int]bool{}
	x.shards = make([]*shard, Shards)
	errs := make([]error, Shards)
	var wg sync.WaitGroup
	for i := range Shards {
		wg.Go(func() { x.shards[i], errs[i] = tryOpenShard(ctx, x.fsys(), x.shardPath(i), false) })
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errMissing) || isDamage(err):
			bad[i] = true
		default:
			x.closeShards()
			return nil, err
		}
	}
	return bad, nil
}

// openShardsExclusive opens every shard with the index lock held
// exclusive: a missing file is created, and one that is damaged or of
// another version deleted and created again.
func (x *Index) openShardsExclusive(ctx context.Context) error {
	x.shards = make([]*shard, Shards)
	for i := range Shards {
		path := x.shardPath(i)
		s, err := tryOpenShard(ctx, x.fsys(), path, true)
		if err != nil && isDamage(err) {
			if err = removeDB(x.fsys(), path); err == nil {
				s, err = tryOpenShard(ctx, x.fsys(), path, true)
			}
		}
		if err != nil {
			x.closeShards()
			return err
		}
		x.shards[i] = s
	}
	return nil
}

// repair closes the shards, takes the index lock exclusive, deletes the
// files that cannot be trusted, opens every shard again (creating what
// is missing), records them, and gives the lock back to shared. With
// the lock exclusive no other process has the files open and every one
// that had has recorded what it wrote, so a file is deleted when it
// differs from the record (changed outside sessctl, or by a process
// that was killed), when it is one of damaged (found damaged, with the
// stamp it had then) unchanged since, or with all.
func (x *Index) repair(ctx context.Context, damaged map[int]stamp, all bool) error {
	x.closeShards()
	if err := x.lock.exclusive(ctx); err != nil {
		return err
	}
	err := x.withState(ctx, func() error {
		rec := x.readState()
		for i := range Shards {
			cur := stampOf(x.fsys(), x.shardPath(i))
			st, found := damaged[i]
			if cur.exists && (all || cur != rec[i] || found && st == cur) {
				if err := removeDB(x.fsys(), x.shardPath(i)); err != nil {
					return err
				}
			}
		}
		if err := x.openShardsExclusive(ctx); err != nil {
			return err
		}
		return x.writeState(x.currentStamps())
	})
	if serr := x.lock.shared(ctx); err == nil {
		err = serr
	}
	return err
}

// repairDamaged rebuilds the shards found damaged (or missing). Each
// file's stamp is taken once this process has closed it (closing can
// checkpoint, which writes it): one that has changed by the time the
// lock is exclusive was rebuilt by another process meanwhile and is kept.
func (x *Index) repairDamaged(ctx context.Context, bad map[int]bool) error {
	x.closeShards()
	damaged := map[int]stamp{}
	for i := range bad {
		damaged[i] = stampOf(x.fsys(), x.shardPath(i))
	}
	// Recorded first: what this process wrote is sessctl's, so only
	// the damage itself decides.
	x.saveState(ctx)
	return x.repair(ctx, damaged, false)
}

// tryOpenShard opens one database file and checks its schema version;
// with create, a missing file is created with its schema. The file is
// opened (or created) through fsys first; the driver then opens it by
// path on its own (modernc.org/sqlite has no filesystem seam).
func tryOpenShard(ctx context.Context, fsys vfs.FS, path string, create bool) (*shard, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	// SQLite creates a database 0644 and gives its -wal and -shm files the
	// database's mode: the file is made 0600 first.
	f, err := fsys.OpenFile(path, flag, vfs.FileMode)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = errMissing
		}
		return nil, fmt.Errorf("open search index %s: %w", path, err)
	}
	f.Close()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open search index %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &shard{path: path, db: db}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open search index %s: %w", path, err)
	}
	return s, nil
}

// init checks the schema version, creating the schema in a new file.
func (s *shard) init(ctx context.Context) error {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT v FROM meta WHERE k='schema'`).Scan(&v)
	switch {
	case err == nil && v == schemaVersion:
		return nil
	case err == nil:
		return errStale
	case !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table"):
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, schema); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	// FTS5 buffers new terms in a hash table before writing them out as a
	// segment; a larger one means fewer segments to merge later.
	if _, err := conn.ExecContext(ctx, `INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216)`); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO meta(k,v) VALUES('schema',?)`, schemaVersion); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		conn.ExecContext(ctx, `ROLLBACK`)
		return err
	}
	return nil
}

// dsn is the driver's name for a database file: WAL, so that searches
// read while another process indexes; synchronous=NORMAL, which in WAL
// mode cannot corrupt the file on a crash (the index can lose the last
// transactions, which the next search redoes); and a busy timeout, so
// two indexing processes wait for each other instead of failing.
func dsn(path string) string {
	p := filepath.ToSlash(path)
	if len(p) > 1 && p[1] == ':' {
		p = "/" + p // a Windows drive letter
	}
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	return "file:" + p + "?_pragma=busy_timeout(60000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
}

// removeDB deletes a database file and its WAL files; only with the
// index lock held exclusive.
func removeDB(fsys vfs.FS, path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is said once
			}
			return fmt.Errorf("remove search index %s: %w", p, err)
		}
	}
	return nil
}

// isDamage reports whether err is SQLite saying a database file is
// damaged or not a database. FTS5 reports a damaged configuration as a
// plain error ("invalid fts5 file format").
func isDamage(err error) bool {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		switch c.Code() & 0xff {
		case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
			return true
		case 1: // SQLITE_ERROR
			if strings.Contains(err.Error(), "invalid fts5 file format") {
				return true
			}
		}
	}
	return errors.Is(err, errStale)
}

// stamp is what a database file's stat says: a file that changed has
// another stamp.
type stamp struct {
	exists             bool
	size, mtime, ctime int64
	id                 uint64
}

func stampOf(fsys vfs.FS, path string) stamp {
	fi, err := fsys.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: vfs.ChangeTime(fi), id: vfs.FileID(fi)}
}

// damage is the error of an update or query that met damaged shards.
type damage struct {
	shards map[int]bool
	err    error
}

func (d *damage) Error() string { return d.err.Error() }
func (d *damage) Unwrap() error { return d.err }

// shardErrors joins the errors of the shards, one per shard; when every
// error is damage, it is a *damage naming the damaged shards.
func shardErrors(errs []error) error {
	err := errors.Join(errs...)
	if err == nil {
		return nil
	}
	d := &damage{shards: map[int]bool{}, err: err}
	for i, e := range errs {
		if e == nil {
			continue
		}
		if !isDamage(e) {
			return err
		}
		d.shards[i] = true
	}
	return d
}

// Check runs SQLite's quick_check on every database file of the index
// and rebuilds (empties) those that fail it; the next search indexes
// their files again. It returns the number of files rebuilt.
func (x *Index) Check(ctx context.Context) (int, error) {
	if x.o.NoIndex {
		return 0, nil
	}
	if x.o.Engine == EngineOwn {
		return x.ownCheck(ctx)
	}
	n := 0
	err := x.use(ctx, nil, func() error {
		bad := map[int]bool{}
		for i, s := range x.shards {
			var res string
			err := s.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res)
			if err == nil && res == "ok" {
				continue
			}
			if err != nil && !isDamage(err) {
				return fmt.Errorf("check search index %s: %w", s.path, err)
			}
			bad[i] = true
		}
		n = len(bad)
		if n == 0 {
			return nil
		}
		return x.repairDamaged(ctx, bad)
	})
	return n, err
}
