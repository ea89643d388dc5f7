package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// fileRow is a file as the index last saw it. A JSONL file was indexed
// up to end (just past its last indexed line, which starts at tailOff and
// has the CRC-32 tailCRC): when it has only grown since, indexing goes on
// from end.
type fileRow struct {
	id, session int64
	path        string
	kind        fileKind
	size, mtime int64
	ino         uint64
	ctime       int64 // the inode's change time (0 where unknown)
	end         int64
	tailOff     int64
	tailCRC     uint32
}

func (r *fileRow) unchanged(f *found) bool {
	return r.kind == f.kind && r.size == f.size && r.mtime == f.mtime && r.mtime != 0 && r.ino == f.ino && r.ctime == f.ctime
}

const rowColumns = `id, session, path, kind, size, mtime, ino, ctime, iend, tail_off, tail_crc`

func scanRow(sc interface{ Scan(...any) error }) (fileRow, error) {
	var r fileRow
	var ino int64
	var crc int64
	err := sc.Scan(&r.id, &r.session, &r.path, &r.kind, &r.size, &r.mtime, &ino, &r.ctime, &r.end, &r.tailOff, &crc)
	r.ino, r.tailCRC = uint64(ino), uint32(crc)
	return r, err
}

// plan is what one shard must do: files to index (new, grown or
// changed) and rows whose files are gone.
type plan struct {
	work  []found
	rows  map[string]fileRow
	gone  []fileRow
	bytes int64
}

// update brings the index up to date with files, the files found under
// roots: new and changed files are indexed, rows of files under roots
// that are gone are deleted. Shards are updated in parallel. Damaged
// shards make it fail with a *damage error (see query).
func (x *Index) update(ctx context.Context, files []found, roots []string) error {
	byShard := make([][]found, len(x.shards))
	for _, f := range files {
		i := shardOf(f.session)
		byShard[i] = append(byShard[i], f)
	}
	plans := make([]plan, len(x.shards))
	errs := make([]error, len(x.shards))
	var wg sync.WaitGroup
	for i := range x.shards {
		wg.Go(func() {
			plans[i], errs[i] = x.plan(ctx, i, byShard[i], roots)
		})
	}
	wg.Wait()
	if err := shardErrors(errs); err != nil {
		return err
	}
	var total int64
	for _, p := range plans {
		total += p.bytes
	}
	var mu sync.Mutex
	var done int64
	progress := func(n int64) {
		if x.o.Progress == nil {
			return
		}
		mu.Lock()
		done += n
		x.o.Progress(min(done, total), total)
		mu.Unlock()
	}
	for i := range x.shards {
		if len(plans[i].work) == 0 && len(plans[i].gone) == 0 {
			continue
		}
		wg.Go(func() {
			errs[i] = x.apply(ctx, i, &plans[i], progress)
		})
	}
	wg.Wait()
	return shardErrors(errs)
}

// plan compares the files of a shard with its rows.
func (x *Index) plan(ctx context.Context, i int, files []found, roots []string) (plan, error) {
	p := plan{rows: map[string]fileRow{}}
	// Only what tells a changed file from an unchanged one is read here;
	// the rest of a row is read when its file is indexed.
	rows, err := x.fileRows(ctx, i)
	if err != nil {
		return p, err
	}
	p.rows = rows
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f.path] = true
		r, ok := p.rows[f.path]
		if ok && r.unchanged(&f) {
			continue
		}
		p.work = append(p.work, f)
		if ok && r.kind == fileJSONL && f.size >= r.end && r.ino == f.ino {
			p.bytes += f.size - r.end
		} else {
			p.bytes += f.size
		}
	}
	for path, r := range p.rows {
		if seen[path] {
			continue
		}
		for _, root := range roots {
			if isUnder(path, root) {
				p.gone = append(p.gone, r)
				break
			}
		}
	}
	return p, nil
}

// batchBytes bounds the file bytes indexed in one transaction, so that a
// search in another process waits for the index's write lock for a
// moment at most.
const batchBytes = 16 << 20

// apply carries out a shard's plan, in transactions of about batchBytes.
// Each file's row is read again inside the transaction, so two processes
// updating the index at once never index the same lines twice.
func (x *Index) apply(ctx context.Context, i int, p *plan, progress func(int64)) error {
	s := x.shards[i]
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("update search index %s: %w", s.path, err)
	}
	defer conn.Close()
	w := &writer{x: x, conn: conn, path: s.path}
	defer w.closeStmts()
	begin := func() error {
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			return fmt.Errorf("update search index %s: %w", s.path, err)
		}
		if err := w.loadNextID(ctx); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
		return nil
	}
	commit := func() error {
		if err := w.flush(ctx); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
		if err := bumpGeneration(ctx, conn); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return fmt.Errorf("update search index %s: %w", s.path, err)
		}
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return fmt.Errorf("update search index %s: %w", s.path, err)
		}
		return nil
	}
	if err := w.prepare(ctx); err != nil {
		return err
	}
	if err := begin(); err != nil {
		return err
	}
	for _, r := range p.gone {
		row, err := scanRow(w.getRow.QueryRowContext(ctx, r.path))
		if errors.Is(err, sql.ErrNoRows) {
			continue // another process deleted it
		}
		if err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return w.fail(err)
		}
		if err := w.deleteFile(ctx, row.id); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
	}
	var inBatch int64
	for _, f := range p.work {
		if err := ctx.Err(); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
		n, err := w.indexFile(ctx, f)
		if err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
		progress(n)
		if inBatch += n; inBatch >= batchBytes {
			if err := commit(); err != nil {
				return err
			}
			if err := begin(); err != nil {
				return err
			}
			inBatch = 0
		}
	}
	if len(p.gone) > 0 {
		if _, err := conn.ExecContext(ctx, `DELETE FROM sessions WHERE id NOT IN (SELECT session FROM files)`); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return fmt.Errorf("update search index %s: %w", s.path, err)
		}
	}
	return commit()
}

// writer indexes files into one shard inside a transaction.
type writer struct {
	x    *Index
	conn *sql.Conn
	path string

	getRow, putFile, setFile, putSession, setName, setSession, delTexts, delDocs, delFile *sql.Stmt
	insDocs, insTexts                                                                     *sql.Stmt

	docs    []doc
	buf     []byte
	pending []pendingDoc
	// pendingBytes is the size of the pending texts; at pendingMax they
	// are written out, so that a large file's texts are never all held.
	pendingBytes int
	nextID       int64
}

func (w *writer) prepare(ctx context.Context) error {
	stmts := []struct {
		p *(*sql.Stmt)
		q string
	}{
		{&w.getRow, `SELECT ` + rowColumns + ` FROM files WHERE path = ?`},
		{&w.putFile, `INSERT INTO files(path, session, kind, size, mtime, ino, ctime, iend, tail_off, tail_crc) VALUES(?,?,?,0,0,0,0,0,0,0)
			ON CONFLICT(path) DO UPDATE SET session=excluded.session, kind=excluded.kind RETURNING id`},
		{&w.setFile, `UPDATE files SET size=?, mtime=?, ino=?, ctime=?, iend=?, tail_off=?, tail_crc=? WHERE id=?`},
		{&w.putSession, `INSERT INTO sessions(path, format) VALUES(?,?) ON CONFLICT(path) DO UPDATE SET format=excluded.format RETURNING id, name`},
		{&w.setName, `UPDATE sessions SET name=? WHERE id=?`},
		{&w.setSession, `UPDATE sessions SET sid=?, name=?, cwd=? WHERE id=?`},
		{&w.delTexts, `DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE file = ?)`},
		{&w.delDocs, `DELETE FROM docs WHERE file = ?`},
		{&w.delFile, `DELETE FROM files WHERE id = ?`},
	}
	for _, s := range stmts {
		st, err := w.conn.PrepareContext(ctx, s.q)
		if err != nil {
			return fmt.Errorf("update search index %s: %w", w.path, err)
		}
		*s.p = st
	}
	return nil
}

func (w *writer) closeStmts() {
	for _, st := range []*sql.Stmt{w.getRow, w.putFile, w.setFile, w.putSession, w.setName, w.setSession, w.delTexts, w.delDocs, w.delFile, w.insDocs, w.insTexts} {
		if st != nil {
			st.Close()
		}
	}
}

func (w *writer) fail(err error) error {
	return fmt.Errorf("update search index %s: %w", w.path, err)
}

func (w *writer) deleteDocs(ctx context.Context, file int64) error {
	if _, err := w.delTexts.ExecContext(ctx, file); err != nil {
		return w.fail(err)
	}
	if _, err := w.delDocs.ExecContext(ctx, file); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *writer) deleteFile(ctx context.Context, file int64) error {
	if err := w.deleteDocs(ctx, file); err != nil {
		return err
	}
	if _, err := w.delFile.ExecContext(ctx, file); err != nil {
		return w.fail(err)
	}
	return nil
}

// indexFile indexes one file (or the part of it that is new) and
// returns the number of bytes it read, for progress. A file that cannot
// be read is reported to Warn and its rows deleted.
func (w *writer) indexFile(ctx context.Context, f found) (int64, error) {
	row, err := scanRow(w.getRow.QueryRowContext(ctx, f.path))
	have := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, w.fail(err)
	}
	fh, err := w.x.fsys().OpenFile(f.path, os.O_RDONLY, 0)
	var fi fs.FileInfo
	if err == nil {
		fi, err = fh.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		if fh != nil {
			fh.Close()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			w.x.warn(fmt.Errorf("read %s: %w", f.path, err))
		}
		if have {
			return 0, w.deleteFile(ctx, row.id)
		}
		return 0, nil
	}
	defer fh.Close()
	f.set(fi)
	if have && row.unchanged(&f) {
		return 0, nil // another process indexed it meanwhile
	}
	mtime := f.mtime
	if time.Since(fi.ModTime()) < racy {
		mtime = 0
	}
	if f.kind != fileJSONL {
		return w.indexAgentUse(ctx, fh, f, row, have, mtime)
	}
	return w.indexJSONL(ctx, fh, f, row, have, mtime)
}

// readAt reads n bytes at off into w.buf.
func (w *writer) readAt(fh vfs.File, off, n int64) ([]byte, error) {
	if int64(cap(w.buf)) < n {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	k, err := fh.ReadAt(b, off)
	if err == io.EOF && int64(k) == n {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (w *writer) indexJSONL(ctx context.Context, fh vfs.File, f found, row fileRow, have bool, mtime int64) (int64, error) {
	from := int64(0)
	if have && row.kind == fileJSONL && row.ino == f.ino {
		from = grownFrom(fh, f.size, row.tailOff, row.end, row.tailCRC, &w.buf)
	}
	var fileID, sessID int64
	name := ""
	if have && from > 0 {
		fileID, sessID = row.id, row.session
		if err := w.conn.QueryRowContext(ctx, `SELECT name FROM sessions WHERE id=?`, sessID).Scan(&name); err != nil {
			return 0, w.fail(err)
		}
	} else {
		if have {
			if err := w.deleteDocs(ctx, row.id); err != nil {
				return 0, err
			}
		}
		if err := w.putSession.QueryRowContext(ctx, f.session, layout.FormatJSONL).Scan(&sessID, &name); err != nil {
			return 0, w.fail(err)
		}
		name = ""
		if err := w.putFile.QueryRowContext(ctx, f.path, sessID, fileJSONL).Scan(&fileID); err != nil {
			return 0, w.fail(err)
		}
	}
	var sc sessionScan
	if from > 0 {
		sc.tailOff, sc.end, sc.tailCRC = row.tailOff, from, row.tailCRC
	}
	// The file is read a chunk at a time, and the texts written out as
	// they pile up: memory is bounded by a line, not by the file.
	var indexErr error // an error of the index, not of the file
	err := eachEntry(fh, from, f.size, &w.buf, &sc, func(off, n int64, e *jsonl.Entry) bool {
		if indexErr = w.indexLine(ctx, e, fileID, sessID, off, n); indexErr != nil {
			return false
		}
		if w.pendingBytes >= pendingMax {
			indexErr = w.flush(ctx)
		}
		return indexErr == nil
	})
	if indexErr != nil {
		return 0, indexErr
	}
	if err != nil {
		w.x.warn(fmt.Errorf("read %s: %w", f.path, err))
		return 0, w.deleteFile(ctx, fileID)
	}
	if sc.notSession {
		// Not a session (no header first): nothing is indexed, and any
		// change reads it again from the start.
		if err := w.deleteDocs(ctx, fileID); err != nil {
			return 0, err
		}
		sc.tailOff, sc.end, sc.tailCRC = 0, 0, 0
	}
	if sc.named {
		name = sc.name
	}
	if from == 0 {
		if _, err := w.setSession.ExecContext(ctx, sc.id, name, sc.cwd, sessID); err != nil {
			return 0, w.fail(err)
		}
	} else if sc.named {
		if _, err := w.setName.ExecContext(ctx, name, sessID); err != nil {
			return 0, w.fail(err)
		}
	}
	if _, err := w.setFile.ExecContext(ctx, f.size, mtime, int64(f.ino), f.ctime, sc.end, sc.tailOff, int64(sc.tailCRC), fileID); err != nil {
		return 0, w.fail(err)
	}
	return f.size - from, nil
}

// indexLine indexes the texts of one entry.
func (w *writer) indexLine(ctx context.Context, e *jsonl.Entry, fileID, sessID, off, n int64) error {
	w.docs = lineDocs(e, w.docs[:0])
	if len(w.docs) == 0 {
		return nil
	}
	ts := int64(0)
	if ms, ok := jsonl.ParseDate(e.Timestamp); ok && !math.IsNaN(ms) {
		ts = int64(ms)
	}
	entry := e.ID
	if e.IDKind != jsonl.KindString {
		entry = ""
	}
	return w.putDocs(ctx, fileID, sessID, off, n, ts, entry)
}

func (w *writer) putDocs(ctx context.Context, fileID, sessID, off, n, ts int64, entry string) error {
	for i, d := range w.docs {
		w.pending = append(w.pending, pendingDoc{id: w.nextID, file: fileID, sess: sessID, off: off, n: n,
			part: i, kind: d.kind, tool: d.tool, ts: ts, entry: entry, text: cleanText(d.text)})
		w.pendingBytes += len(d.text)
		w.nextID++
	}
	return nil
}

// pendingDoc is a text to be written at the end of the transaction.
type pendingDoc struct {
	id, file, sess, off, n int64
	part                   int
	kind                   Kind
	tool                   string
	ts                     int64
	entry                  string
	text                   string
}

// pendingMax bounds the texts held before they are written out inside a
// transaction (each write makes FTS5 write a segment, which it merges
// later: a few MB each keeps those few). Tests lower it.
var pendingMax = 8 << 20

// rowsPerInsert is how many rows one INSERT statement writes.
const rowsPerInsert = 64

// flush writes the pending texts: their rows, then the FTS5 table, in
// statements of many rows each and with no other statement in between.
// FTS5 keeps new terms in memory until a statement on another table
// opens a savepoint, which makes it write them out as a small segment
// that must later be merged: interleaving would multiply its work.
func (w *writer) flush(ctx context.Context) error {
	const docsHead = `INSERT INTO docs(id, file, session, off, len, part, kind, tool, ts, entry) VALUES`
	args := make([]any, 0, 10*rowsPerInsert)
	for rest := w.pending; len(rest) > 0; {
		n := min(len(rest), rowsPerInsert)
		args = args[:0]
		for _, d := range rest[:n] {
			args = append(args, d.id, d.file, d.sess, d.off, d.n, d.part, d.kind, d.tool, d.ts, d.entry)
		}
		var err error
		if n == rowsPerInsert {
			var st *sql.Stmt
			if st, err = w.stmt(ctx, &w.insDocs, insertSQL(docsHead, 10, n)); err == nil {
				_, err = st.ExecContext(ctx, args...)
			}
		} else {
			_, err = w.conn.ExecContext(ctx, insertSQL(docsHead, 10, n), args...)
		}
		if err != nil {
			return w.fail(err)
		}
		rest = rest[n:]
	}
	// One row per statement: a statement that writes several rows opens
	// a savepoint, and FTS5 flushes its terms at every savepoint.
	st, err := w.stmt(ctx, &w.insTexts, `INSERT INTO fts(rowid, text) VALUES(?,?)`)
	if err != nil {
		return w.fail(err)
	}
	for _, d := range w.pending {
		if _, err := st.ExecContext(ctx, d.id, d.text); err != nil {
			return w.fail(err)
		}
	}
	clear(w.pending) // the texts are not kept past their flush
	w.pending, w.pendingBytes = w.pending[:0], 0
	if _, err := w.conn.ExecContext(ctx, `INSERT INTO meta(k, v) VALUES('nextdoc', ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v`, strconv.FormatInt(w.nextID, 10)); err != nil {
		return w.fail(err)
	}
	return nil
}

// stmt returns a prepared statement, preparing it the first time.
func (w *writer) stmt(ctx context.Context, p **sql.Stmt, q string) (*sql.Stmt, error) {
	if *p == nil {
		st, err := w.conn.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		*p = st
	}
	return *p, nil
}

var insertSQLs sync.Map

// insertSQL returns head followed by n groups of cols placeholders.
func insertSQL(head string, cols, n int) string {
	key := fmt.Sprint(head, cols, n)
	if q, ok := insertSQLs.Load(key); ok {
		return q.(string)
	}
	var sb strings.Builder
	sb.WriteString(head)
	group := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(group)
	}
	q := sb.String()
	insertSQLs.Store(key, q)
	return q
}

// loadNextID reads the next text id: ids only grow, so no FTS5 row id is
// ever used twice.
func (w *writer) loadNextID(ctx context.Context) error {
	var v string
	err := w.conn.QueryRowContext(ctx, `SELECT v FROM meta WHERE k='nextdoc'`).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return w.fail(err)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	var maxID int64
	if err := w.conn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM docs`).Scan(&maxID); err != nil {
		return w.fail(err)
	}
	w.nextID = max(n, maxID+1, 1)
	return nil
}

// cleanText replaces the bytes that snippets use as match markers.
func cleanText(s string) string {
	if strings.IndexByte(s, 1) < 0 && strings.IndexByte(s, 2) < 0 {
		return s
	}
	return strings.NewReplacer("\x01", " ", "\x02", " ").Replace(s)
}

// indexAgentUse indexes an AgentUse file whole (they are small and
// replaced, never appended to).
func (w *writer) indexAgentUse(ctx context.Context, fh vfs.File, f found, row fileRow, have bool, mtime int64) (int64, error) {
	if have {
		if err := w.deleteDocs(ctx, row.id); err != nil {
			return 0, err
		}
	}
	var sessID, fileID int64
	var name string
	if err := w.putSession.QueryRowContext(ctx, f.session, layout.FormatAgentUse).Scan(&sessID, &name); err != nil {
		return 0, w.fail(err)
	}
	if err := w.putFile.QueryRowContext(ctx, f.path, sessID, f.kind).Scan(&fileID); err != nil {
		return 0, w.fail(err)
	}
	data, err := w.readAt(fh, 0, f.size)
	if err != nil {
		w.x.warn(fmt.Errorf("read %s: %w", f.path, err))
		return 0, w.deleteFile(ctx, fileID)
	}
	var entry string
	var ts int64
	w.docs, entry, ts = agentUseDocs(f.kind, data, w.docs[:0])
	if entry == "" {
		entry = strings.TrimSuffix(filepath.Base(f.path), ".json")
		if f.kind == fileAUMessage {
			entry = filepath.Base(filepath.Dir(f.path))
		}
	}
	if f.kind == fileAUSession {
		obj := trimWS(data)
		cwd := lookupString(obj, "project", "cwd")
		if _, err := w.setSession.ExecContext(ctx, entry, lookupString(obj, "agent", "name"), cwd, sessID); err != nil {
			return 0, w.fail(err)
		}
	}
	if err := w.putDocs(ctx, fileID, sessID, 0, f.size, ts, entry); err != nil {
		return 0, err
	}
	if _, err := w.setFile.ExecContext(ctx, f.size, mtime, int64(f.ino), f.ctime, f.size, 0, 0, fileID); err != nil {
		return 0, w.fail(err)
	}
	return f.size, nil
}

func lookupString(obj []byte, path ...string) string {
	if !jsonl.Valid(obj) {
		return ""
	}
	for _, k := range path {
		obj, _ = jsonl.Lookup(obj, k)
	}
	s, _ := jsonl.String(obj)
	return s
}
