package search

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/sessctl/sessctl/layout/vfs"
)

// ftsSnippers counts the ftsSnippers opened, for the tests that prove
// the own engine and the search without an index open none.
var ftsSnippers atomic.Int64

// ftsSnipper is the snipper of the FTS5 engine: an in-memory FTS5 table
// with the index's tokenizer, into which the texts of the hits shown are
// loaded to be matched and marked by highlight().
type ftsSnipper struct {
	db   *sql.DB
	conn *sql.Conn
	fs   vfs.FS // where the hits' files are read
}

func newFTSSnipper(ctx context.Context, fsys vfs.FS) (*ftsSnipper, error) {
	ftsSnippers.Add(1)
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, fmt.Errorf("open snippet table: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open snippet table: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE snip USING fts5(text, tokenize='`+tokenizer+`')`); err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("open snippet table: %w", err)
	}
	return &ftsSnipper{db: db, conn: conn, fs: fsys}, nil
}

func (s *ftsSnipper) close() {
	s.conn.Close()
	s.db.Close()
}

// check parses the query.
func (s *ftsSnipper) check(ctx context.Context, query string) error {
	if strings.TrimSpace(query) == "" {
		return fmt.Errorf("%w: the query is empty", ErrQuery)
	}
	rows, err := s.conn.QueryContext(ctx, `SELECT rowid FROM snip WHERE snip MATCH ?`, query)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "SQL logic error: ")
		return fmt.Errorf("%w: %s", ErrQuery, strings.TrimSuffix(msg, " (1)"))
	}
	return nil
}

// match loads texts into the table and returns, for those that match,
// their text with the matches between \x01 and \x02.
func (s *ftsSnipper) match(ctx context.Context, query string, texts []string) (map[int]string, error) {
	// The texts are added in a transaction that is rolled back: one
	// flush of FTS5's terms instead of one per row, and no delete.
	if _, err := s.conn.ExecContext(ctx, `BEGIN`); err != nil {
		return nil, fmt.Errorf("search snippet: %w", err)
	}
	defer s.conn.ExecContext(context.Background(), `ROLLBACK`)
	for i, t := range texts {
		if t == "" {
			continue
		}
		if _, err := s.conn.ExecContext(ctx, `INSERT INTO snip(rowid, text) VALUES(?,?)`, i, t); err != nil {
			return nil, fmt.Errorf("search snippet: %w", err)
		}
	}
	rows, err := s.conn.QueryContext(ctx, `SELECT rowid, highlight(snip, 0, char(1), char(2)) FROM snip WHERE snip MATCH ?`, query)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var i int
		var h string
		if err := rows.Scan(&i, &h); err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, rows.Err()
}

// hits is snipper.hits with FTS5 marking the matches.
func (s *ftsSnipper) hits(ctx context.Context, query string, cands []candidate) ([]Hit, error) {
	marked, err := s.match(ctx, query, candidateTexts(s.fs, cands))
	if err != nil {
		return nil, err
	}
	return markedHits(cands, marked), nil
}
