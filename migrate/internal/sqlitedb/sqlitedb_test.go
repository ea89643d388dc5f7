package sqlitedb

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestOpen reads a rollback-journal database in place and a WAL database
// from a copy, and checks that neither source directory gains or changes
// a file.
func TestOpen(t *testing.T) {
	t.Parallel()
	for _, wal := range []bool{false, true} {
		name := "a dir?#%" // characters a URI must escape
		if runtime.GOOS == "windows" {
			name = "a dir#%" // Windows file names cannot hold '?'
		}
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s.db")
		w, err := sql.Open("sqlite", "file:"+uriPath(path))
		if err != nil {
			t.Fatal(err)
		}
		stmts := []string{`CREATE TABLE t (v TEXT)`, `INSERT INTO t VALUES ('x')`}
		if wal {
			stmts = append([]string{`PRAGMA journal_mode=WAL`}, stmts...)
		}
		for _, q := range stmts {
			if _, err := w.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if !wal {
			w.Close()
		}
		before := listing(t, dir)
		db, err := Open(nil, path, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var v string
		if err := db.QueryRow(`SELECT v FROM t`).Scan(&v); err != nil || v != "x" {
			t.Errorf("wal %v: %q %v", wal, v, err)
		}
		if db.Copied != wal {
			t.Errorf("wal %v: copied %v", wal, db.Copied)
		}
		if _, err := db.Exec(`INSERT INTO t VALUES ('y')`); err == nil {
			t.Errorf("wal %v: the database accepted a write", wal)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if after := listing(t, dir); after != before {
			t.Errorf("wal %v: source directory changed:\n%s\n%s", wal, before, after)
		}
		if wal {
			w.Close()
		}
	}
	if IsSQLite(nil, filepath.Join(t.TempDir(), "none")) {
		t.Error("a missing file is a database")
	}
}

func listing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, e := range ents {
		fi, _ := e.Info()
		out += e.Name() + " " + fi.ModTime().String() + "\n"
	}
	return out
}

// TestTables lists a WAL database's tables without creating or changing
// any file beside it, while a writer has it open.
func TestTables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	w, err := sql.Open("sqlite", "file:"+uriPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, q := range []string{`PRAGMA journal_mode=WAL`, `CREATE TABLE a (v TEXT)`, `CREATE TABLE b (v TEXT)`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	got, err := Tables(nil, path)
	if err != nil || len(got) != 2 || !got["a"] || !got["b"] {
		t.Fatalf("tables %v, %v", got, err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the directory changed:\n%s\nafter:\n%s", before, after)
	}
	if _, err := Tables(nil, filepath.Join(dir, "missing.db")); err == nil {
		t.Error("no error for a missing database")
	}
}

// snapshot describes every file of dir: name, size and modification time.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf("%s %d %v\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return s
}
