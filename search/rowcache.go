package search

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Every search compares the files of the stores with the rows of each
// shard's files table. Reading thousands of rows through SQLite is most
// of a warm search, so the rows are kept besides in a cache file,
// rows-<shard>.cache, tagged with the shard's identity and generation
// (meta rows 'dbid' and 'gen', the generation raised by every
// transaction that indexes or deletes). A search reads the tag and, when
// the cache carries it, the file; on any doubt (another tag, a short or
// damaged file) it reads the rows from the database and writes the cache
// again. The cache only decides which files are looked at more closely:
// indexing reads each file's row again inside its transaction.

const rowCacheMagic = "sessctl search rows 2\n"

// querier is what *sql.DB and *sql.Conn have in common here.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// shardTag returns "<dbid>:<gen>", or "" for a shard that has no
// identity yet (it gets one at its next update).
func shardTag(ctx context.Context, q querier) (string, error) {
	var id, gen sql.NullString
	err := q.QueryRowContext(ctx, `SELECT (SELECT v FROM meta WHERE k='dbid'), (SELECT v FROM meta WHERE k='gen')`).Scan(&id, &gen)
	if err != nil || !id.Valid {
		return "", err
	}
	return id.String + ":" + gen.String, nil
}

// bumpGeneration gives the shard an identity when it has none and raises
// its generation; it runs inside the transaction that changes the rows.
func bumpGeneration(ctx context.Context, conn *sql.Conn) error {
	var b [16]byte
	rand.Read(b[:])
	if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO meta(k,v) VALUES('dbid',?)`, hex.EncodeToString(b[:])); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, `INSERT INTO meta(k,v) VALUES('gen','1') ON CONFLICT(k) DO UPDATE SET v=CAST(CAST(v AS INTEGER)+1 AS TEXT)`)
	return err
}

func (x *Index) rowCachePath(i int) string {
	return filepath.Join(x.dir, fmt.Sprintf("rows-%d.cache", i))
}

// fileRows returns the rows of shard i by path, with what tells a changed
// file from an unchanged one (path, kind, size, mtime, ino, ctime, end).
func (x *Index) fileRows(ctx context.Context, i int) (map[string]fileRow, error) {
	s := x.shards[i]
	cache := x.rowCachePath(i)
	tag, err := shardTag(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	if tag != "" {
		if rows, ok := loadRowCache(x.fsys(), cache, tag); ok {
			return rows, nil
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	defer conn.Close()
	if tag == "" {
		// An index made before the cache existed gets its identity now.
		if err := bumpGeneration(ctx, conn); err != nil {
			return nil, fmt.Errorf("update search index %s: %w", s.path, err)
		}
	}
	// The tag and the rows are read in one transaction, so the cache
	// written below holds the rows of the generation it names.
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	tag, err = shardTag(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT path, kind, size, mtime, ino, ctime, iend FROM files`)
	if err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	defer rows.Close()
	out := map[string]fileRow{}
	for rows.Next() {
		var r fileRow
		var ino int64
		if err := rows.Scan(&r.path, &r.kind, &r.size, &r.mtime, &ino, &r.ctime, &r.end); err != nil {
			return nil, fmt.Errorf("read search index %s: %w", s.path, err)
		}
		r.ino = uint64(ino)
		out[r.path] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read search index %s: %w", s.path, err)
	}
	if tag != "" {
		storeRowCache(x.fsys(), cache, tag, out) // a cache: a failure costs only time
	}
	return out, nil
}

// loadRowCache reads a cache file, reporting false unless it is whole
// and carries tag.
func loadRowCache(fsys vfs.FS, path, tag string) (map[string]fileRow, bool) {
	data, err := fsys.ReadFile(path)
	if err != nil || len(data) < len(rowCacheMagic)+4 {
		return nil, false
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum || !bytes.HasPrefix(body, []byte(rowCacheMagic)) {
		return nil, false
	}
	body = body[len(rowCacheMagic):]
	nl := bytes.IndexByte(body, '\n')
	if nl < 0 || string(body[:nl]) != tag {
		return nil, false
	}
	body = body[nl+1:]
	count, n := binary.Uvarint(body)
	if n <= 0 || count > uint64(len(body)) {
		return nil, false
	}
	body = body[n:]
	out := make(map[string]fileRow, count)
	for range count {
		var r fileRow
		var ok bool
		var p []byte
		if p, body, ok = cutBytes(body); !ok {
			return nil, false
		}
		r.path = string(p)
		var v [6]int64
		for k := range v {
			x, n := binary.Varint(body)
			if n <= 0 {
				return nil, false
			}
			v[k], body = x, body[n:]
		}
		r.kind, r.size, r.mtime, r.ino, r.ctime, r.end = fileKind(v[0]), v[1], v[2], uint64(v[3]), v[4], v[5]
		out[r.path] = r
	}
	return out, len(body) == 0
}

func cutBytes(b []byte) (field, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, nil, false
	}
	return b[n : n+int(l)], b[n+int(l):], true
}

// storeRowCache writes a cache file by renaming a new file over it
// (without fsync: it is a cache).
func storeRowCache(fsys vfs.FS, path, tag string, rows map[string]fileRow) error {
	b := make([]byte, 0, 64+len(rows)*96)
	b = append(b, rowCacheMagic...)
	b = append(b, tag...)
	b = append(b, '\n')
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for _, r := range rows {
		b = binary.AppendUvarint(b, uint64(len(r.path)))
		b = append(b, r.path...)
		for _, v := range [6]int64{int64(r.kind), r.size, r.mtime, int64(r.ino), r.ctime, r.end} {
			b = binary.AppendVarint(b, v)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return vfs.WriteFileAtomicNoSync(fsys, path, b, vfs.FileMode)
}
