// Package sqlitedb opens the SQLite databases of foreign agents for
// reading without ever writing into them. It uses modernc.org/sqlite, a
// SQLite driver that builds without cgo.
//
// A database in rollback-journal mode with no journal beside it is opened
// in place with mode=ro (shared locks only; nothing is created). A
// database in WAL mode, or with a -wal or -journal file beside it, cannot
// be read that way without SQLite creating or changing files next to it
// (the -shm index, a rollback), so it is copied first, with its -wal and
// -journal, into a private temporary directory, and the copy is read.
//
// The source database and its -wal and -journal are looked at and read
// through a vfs.FS (migrate.ImportOptions.FS; nil means vfs.OS()). The
// driver itself opens a database by path (modernc.org/sqlite has no
// filesystem seam): a database read in place must be on the real
// filesystem, and the private copy is made on the real filesystem
// (vfs.OS()), where the driver reads it.
package sqlitedb

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate/internal/srcfs"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open database and what closing it must clean up.
type DB struct {
	*sql.DB
	Path   string // the source database
	Copied bool   // it was copied before reading
	tmp    string
}

// Close closes the database and removes the temporary copy.
func (d *DB) Close() error {
	err := d.DB.Close()
	if d.tmp != "" {
		if rerr := vfs.OS().RemoveAll(d.tmp); err == nil {
			err = rerr
		}
	}
	return err
}

// header is the start of every SQLite database file.
var header = []byte("SQLite format 3\x00")

// IsSQLite reports whether the file at path starts with the SQLite
// header, read through fsys.
func IsSQLite(fsys vfs.FS, path string) bool {
	f, err := srcfs.Open(fsys, path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [16]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && bytes.Equal(b[:], header)
}

// walMode reports whether the database's header says WAL (file format
// read and write versions 2).
func walMode(fsys vfs.FS, path string) (bool, error) {
	f, err := srcfs.Open(fsys, path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var b [100]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false, fmt.Errorf("read header of %s: %w", path, err)
	}
	if !bytes.Equal(b[:16], header) {
		return false, fmt.Errorf("%s is not a SQLite database", path)
	}
	return b[18] == 2 || b[19] == 2, nil
}

func exists(fsys vfs.FS, p string) bool {
	_, err := srcfs.Or(fsys).Lstat(p)
	return err == nil
}

// Open opens the database at path for reading, looking at it through
// fsys; tempDir ("" for the system's) receives the copy when one is
// needed.
func Open(fsys vfs.FS, path, tempDir string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	wal, err := walMode(fsys, abs)
	if err != nil {
		return nil, err
	}
	d := &DB{Path: abs}
	target := abs
	query := "?mode=ro&_pragma=query_only(1)"
	if wal || exists(fsys, abs+"-wal") || exists(fsys, abs+"-journal") {
		if tempDir == "" {
			tempDir = os.TempDir()
		}
		tmp, err := vfs.MkdirTemp(vfs.OS(), tempDir, "sessctl-import-")
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", abs, err)
		}
		d.tmp, d.Copied = tmp, true
		target = filepath.Join(tmp, "db.sqlite")
		for _, suffix := range []string{"", "-wal", "-journal"} {
			if suffix != "" && !exists(fsys, abs+suffix) {
				continue
			}
			if err := copyFile(fsys, abs+suffix, target+suffix); err != nil {
				_ = vfs.OS().RemoveAll(tmp)
				return nil, fmt.Errorf("copy %s: %w", abs+suffix, err)
			}
		}
		// The copy is private: SQLite may replay its WAL or journal there.
		query = "?_pragma=query_only(1)"
	}
	// The driver opens the file by path, itself.
	db, err := sql.Open("sqlite", "file:"+uriPath(target)+query)
	if err != nil {
		d.cleanup()
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	d.DB = db
	if err := db.Ping(); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	return d, nil
}

func (d *DB) cleanup() {
	if d.tmp != "" {
		_ = vfs.OS().RemoveAll(d.tmp)
	}
}

// copyFile copies src, read through fsys, to dst in the private copy's
// directory on the real filesystem.
func copyFile(fsys vfs.FS, src, dst string) error {
	in, err := srcfs.Open(fsys, src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := vfs.OS().OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// uriPath escapes a file path for a SQLite URI filename.
func uriPath(p string) string {
	if runtime.GOOS == "windows" {
		p = "/" + filepath.ToSlash(p)
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// Tables returns the names of the tables of the database at path, read
// from the file as it is (immutable: no lock, no -shm, nothing created;
// what only a -wal file holds is not seen). It is meant for telling one
// agent's database from another's cheaply, before Open. The header is
// checked through fsys; the driver then opens the file by path.
func Tables(fsys vfs.FS, path string) (map[string]bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if !IsSQLite(fsys, abs) {
		return nil, fmt.Errorf("%s is not a SQLite database", abs)
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(abs)+"?mode=ro&immutable=1&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, fmt.Errorf("read the tables of %s: %w", abs, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("read the tables of %s: %w", abs, err)
		}
		out[name] = true
	}
	return out, rows.Err()
}
