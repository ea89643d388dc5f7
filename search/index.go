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

	_ "modernc.org/sqlite" // registers the "sqlite" driver (cgo-free, FTS5 compiled in)
)

// schemaVersion is stored in every shard; a shard of another version is
// deleted and built again.
const schemaVersion = "1"

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
	// %LocalAppData% on Windows). It is created 0700.
	Dir string
	// NoIndex searches without an index: every file of the stores is read
	// at each search and nothing is written. Dir is not used.
	NoIndex bool
	// Rebuild deletes the index and builds it again at the first search.
	Rebuild bool
	// Progress, when not nil, is called while the index is brought up to
	// date with the bytes indexed so far and the bytes to index, from one
	// goroutine at a time. It is not called when nothing needs indexing.
	Progress func(done, total int64)
	// Warn, when not nil, is told about each file or directory of a store
	// that could not be read (the error names it), once per search. Such
	// files are left out. It is called from one goroutine at a time.
	Warn func(err error)
}

// Index is a full-text index of session stores. It is safe for use by
// one goroutine at a time; several processes may use the same index
// directory at once.
type Index struct {
	o      Options
	dir    string
	shards []*shard
	warnMu sync.Mutex
	warned map[string]bool // what this search reported, so each is told once
}

type shard struct {
	path string
	db   *sql.DB
}

// Open opens (creating when needed) the index in o.Dir. Nothing is
// indexed until the first Search. With o.NoIndex nothing is opened.
func Open(ctx context.Context, o Options) (*Index, error) {
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open search index %s: %w", dir, err)
	}
	x.dir = dir
	if o.Rebuild {
		for i := range Shards {
			if err := removeDB(x.shardPath(i)); err != nil {
				return nil, err
			}
		}
	}
	for i := range Shards {
		s, err := openShard(ctx, x.shardPath(i))
		if err != nil {
			x.Close()
			return nil, err
		}
		x.shards = append(x.shards, s)
	}
	return x, nil
}

// Dir returns the index directory ("" with NoIndex).
func (x *Index) Dir() string { return x.dir }

// Close closes the index's databases.
func (x *Index) Close() error {
	var first error
	for _, s := range x.shards {
		if s != nil && s.db != nil {
			if err := s.db.Close(); err != nil && first == nil {
				first = fmt.Errorf("close search index %s: %w", s.path, err)
			}
		}
	}
	x.shards = nil
	return first
}

func (x *Index) shardPath(i int) string {
	return filepath.Join(x.dir, fmt.Sprintf("index-%d.db", i))
}

// warn tells Options.Warn about err, once per search: a directory of
// session files is walked for both formats and would be reported twice.
func (x *Index) warn(err error) {
	if x.o.Warn == nil {
		return
	}
	x.warnMu.Lock()
	defer x.warnMu.Unlock()
	if x.warned[err.Error()] {
		return
	}
	if x.warned == nil {
		x.warned = map[string]bool{}
	}
	x.warned[err.Error()] = true
	x.o.Warn(err)
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

// openShard opens one database file, creating its schema, and deletes
// and recreates it when it is damaged or of another schema version.
func openShard(ctx context.Context, path string) (*shard, error) {
	s, err := tryOpenShard(ctx, path)
	if err == nil || !isDamage(err) {
		return s, err
	}
	if err := removeDB(path); err != nil {
		return nil, err
	}
	return tryOpenShard(ctx, path)
}

// errStale is a shard of another schema version.
var errStale = errors.New("search index of another version")

func tryOpenShard(ctx context.Context, path string) (*shard, error) {
	// SQLite creates a database 0644 and gives its -wal and -shm files the
	// database's mode: the file is made 0600 first.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
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
		if errors.Is(err, errStale) {
			if err := removeDB(path); err != nil {
				return nil, err
			}
			return tryOpenShard(ctx, path)
		}
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

// removeDB deletes a database file and its WAL files.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove damaged search index %s: %w", p, err)
		}
	}
	return nil
}

// isDamage reports whether err is SQLite saying a database file is
// damaged or not a database.
func isDamage(err error) bool {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		switch c.Code() & 0xff {
		case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
			return true
		}
	}
	return errors.Is(err, errStale)
}

// reset deletes a damaged shard and opens a new empty one in its place.
func (x *Index) reset(ctx context.Context, i int) error {
	s := x.shards[i]
	s.db.Close()
	if err := removeDB(s.path); err != nil {
		return err
	}
	ns, err := openShard(ctx, s.path)
	if err != nil {
		return err
	}
	x.shards[i] = ns
	return nil
}

// Check runs SQLite's quick_check on every database file of the index
// and rebuilds (empties) those that fail it; the next search indexes
// their files again. It returns the number of files rebuilt.
func (x *Index) Check(ctx context.Context) (int, error) {
	n := 0
	for i, s := range x.shards {
		var res string
		err := s.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res)
		if err == nil && res == "ok" {
			continue
		}
		if err != nil && !isDamage(err) {
			return n, fmt.Errorf("check search index %s: %w", s.path, err)
		}
		if err := x.reset(ctx, i); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
