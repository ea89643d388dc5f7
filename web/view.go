package web

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// A view is what a session page knows of a session file: every entry's
// envelope (type, id, parent, time, role, where its line is) indexed by
// package tree, and the bytes of the entries that are not messages. The
// bytes of message entries are kept too for a file below Options.leanMin;
// above it they are read back from the file for the page shown (and
// checked to be the lines that were parsed), so that a session of hundreds
// of megabytes is never held whole. A file that only grew since it was
// read is read from where it ended. A file that is not a plain version 3
// session (one to migrate, a damaged header) is read by a read-only
// engine.OpenFile instead, which migrates it in memory or names the damage.

type view struct {
	fsys vfs.FS
	path string
	mu   sync.RWMutex // guards st; held for reading while a page uses it
	st   *viewState
}

// viewState is a view's reading of the file.
type viewState struct {
	key       statKey
	header    jsonl.Header
	chunks    [][]jsonl.Entry // the entries, in file order, in the pieces they were read in
	ix        *tree.Index
	size      int64 // the bytes read: the end of the last complete line
	lines     int
	check     []byte // the bytes before size, to tell that the file only grew
	grow      bool   // the file may be read on from size (a version 3 file read here, ending cleanly)
	lean      bool   // message entries are detached
	malformed int
	gen       int // bumped whenever entries are added

	treeMu   sync.Mutex // guards the two below: pages build them under the view's read lock
	treeGen  int
	treeMemo *treeModel
}

// readChunk is how much of a file is read at a time (a longer line is read
// whole).
const readChunk = 1 << 20

// loadView reads the session file at path.
func loadView(ctx context.Context, fsys vfs.FS, path string, leanMin int64) (*view, error) {
	st, err := loadState(ctx, fsys, path, leanMin)
	if err != nil {
		return nil, err
	}
	return &view{fsys: fsys, path: path, st: st}, nil
}

func loadState(ctx context.Context, fsys vfs.FS, path string, leanMin int64) (*viewState, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", path, notFound(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read session %s: not a regular file", path)
	}
	lean := fi.Size() >= leanMin
	var keep func(*jsonl.Entry) bool
	if lean {
		keep = func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage }
	}
	p, err := jsonl.ParseReader(io.LimitReader(f, fi.Size()), readChunk, keep)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", path, err)
	}
	if len(p.Entries) == 0 || !p.Entries[0].IsHeader() || p.Entries[0].IDKind != jsonl.KindString ||
		migrate.Needed(migrate.VersionOf(&p.Entries[0])) || jsonl.ParseHeader(p.Entries[0]).Version > jsonl.CurrentVersion {
		return loadEngine(ctx, fsys, path, fi)
	}
	st := &viewState{key: keyOf(fi), header: jsonl.ParseHeader(p.Entries[0]), chunks: [][]jsonl.Entry{p.Entries},
		ix: tree.Build(p.Entries), lean: lean, malformed: len(p.Malformed), lines: p.Lines, size: p.Size,
		grow: p.Tail == jsonl.TailClean && p.Size == fi.Size(), gen: 1}
	if st.grow {
		st.check = tailBytes(f, st.size)
	}
	return st, nil
}

// loadEngine reads the file with a read-only engine open: a file to
// migrate (in memory), or one the engine refuses with its error.
func loadEngine(ctx context.Context, fsys vfs.FS, path string, fi fs.FileInfo) (*viewState, error) {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: filepath.Dir(path), FS: fsys})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	s, err := st.Open(ctx, path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	es := s.Entries()
	entries := make([]jsonl.Entry, 0, len(es)+1)
	entries = append(entries, s.Header().Entry)
	for _, e := range es {
		entries = append(entries, *e)
	}
	return &viewState{key: keyOf(fi), header: s.Header(), chunks: [][]jsonl.Entry{entries}, ix: tree.Build(entries),
		malformed: s.Recovery().Malformed, gen: 1}, nil
}

// refresh brings the view up to date with the file: nothing when it did
// not change, the appended lines when it only grew, everything again
// otherwise. It reports whether entries were added or replaced.
func (v *view) refresh(ctx context.Context, leanMin int64) (bool, error) {
	fi, err := v.fsys.Stat(v.path)
	if err != nil {
		return false, fmt.Errorf("read session %s: %w", v.path, notFound(err))
	}
	v.mu.RLock()
	same := keyOf(fi) == v.st.key
	v.mu.RUnlock()
	if same {
		return false, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if keyOf(fi) == v.st.key {
		return false, nil
	}
	if ok := v.st.readOn(v.fsys, v.path, fi); ok {
		return true, nil
	}
	st, err := loadState(ctx, v.fsys, v.path, leanMin)
	if err != nil {
		return false, err
	}
	st.gen = v.st.gen + 1
	v.st = st
	return true, nil
}

// readOn reads the lines appended to the file at path since it was read,
// when the file (now fi) only grew; false when it must be read again
// whole. The view's lock is held.
func (st *viewState) readOn(fsys vfs.FS, path string, fi fs.FileInfo) bool {
	k := keyOf(fi)
	if !st.grow || k.ino == 0 || k.ino != st.key.ino || k.size <= st.size {
		return false
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if !bytes.Equal(tailBytes(f, st.size), st.check) {
		return false
	}
	var keep func(*jsonl.Entry) bool
	if st.lean {
		keep = func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage }
	}
	p, err := jsonl.ParseReader(io.NewSectionReader(f, st.size, k.size-st.size), readChunk, keep)
	if err != nil || p.Tail != jsonl.TailClean || p.Size != k.size-st.size {
		return false // caught mid-line: read whole (rare)
	}
	for i := range p.Entries {
		p.Entries[i].Offset += st.size
		p.Entries[i].Line += st.lines
	}
	if len(p.Entries) > 0 {
		st.chunks = append(st.chunks, p.Entries)
		for i := range p.Entries {
			st.ix.Add(&p.Entries[i])
		}
	}
	st.malformed += len(p.Malformed)
	st.lines += p.Lines
	st.size = k.size
	st.key = k
	st.check = tailBytes(f, st.size)
	st.gen++
	return true
}

// tailBytes returns up to 64 bytes of f before off.
func tailBytes(f vfs.File, off int64) []byte {
	n := min(off, 64)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off-n); err != nil {
		return nil
	}
	return b
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", engine.ErrNotFound, err)
	}
	return err
}

// filled returns copies of es with their bytes: detached entries are read
// back from the file, in runs of nearby lines, and checked to be the
// lines that were parsed (an error wrapping jsonl.ErrChanged when the
// file changed since).
func (v *view) filled(es []*jsonl.Entry) ([]*jsonl.Entry, error) {
	return v.fill(es, 0)
}

// previewMax is the longest line the tree reads back for an entry's
// preview; a longer one (a large tool result, an image) is named by its
// role alone.
const previewMax = 8 << 10

// previews is filled for the tree: lines longer than previewMax stay
// detached.
func (v *view) previews(es []*jsonl.Entry) ([]*jsonl.Entry, error) {
	return v.fill(es, previewMax)
}

// fill is filled, leaving detached the lines longer than max (when above
// zero).
func (v *view) fill(es []*jsonl.Entry, max int) ([]*jsonl.Entry, error) {
	out := make([]*jsonl.Entry, len(es))
	var detached []*jsonl.Entry
	for i, e := range es {
		c := *e
		out[i] = &c
		if _, n := c.Span(); c.Detached() && (max <= 0 || n <= max) {
			detached = append(detached, &c)
		}
	}
	if len(detached) == 0 {
		return out, nil
	}
	f, err := v.fsys.OpenFile(v.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", v.path, notFound(err))
	}
	defer f.Close()
	slices.SortFunc(detached, func(a, b *jsonl.Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	// Nearby lines are read together: runs of lines at most gap bytes
	// apart, of at most run bytes (smaller for previews, which are
	// scattered over the file).
	gap, run := int64(64<<10), int64(4<<20)
	if max > 0 {
		gap, run = 4<<10, 256<<10
	}
	for i := 0; i < len(detached); {
		start, _ := detached[i].Span()
		j := i + 1
		for ; j < len(detached); j++ {
			po, pn := detached[j-1].Span()
			o, n := detached[j].Span()
			if o-(po+int64(pn)) > gap || o+int64(n)-start > run {
				break
			}
		}
		lo, ln := detached[j-1].Span()
		buf := make([]byte, lo+int64(ln)-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return nil, fmt.Errorf("read session %s: %w", v.path, err)
		}
		for _, e := range detached[i:j] {
			o, n := e.Span()
			line := buf[o-start : o-start+int64(n) : o-start+int64(n)]
			if max > 0 {
				line = bytes.Clone(line) // keep the lines, not the run read
			}
			if err := e.Fill(line); err != nil {
				return nil, fmt.Errorf("read session %s: %w", v.path, err)
			}
		}
		i = j
	}
	return out, nil
}

// viewCache keeps the views of the sessions looked at last.
type viewCache struct {
	fsys  vfs.FS
	mu    sync.Mutex
	max   int
	order []string // least recently used first
	m     map[string]*view
	load  sync.Map // path -> *sync.Mutex: one reading of a file at a time
}

func newViewCache(max int, fsys vfs.FS) *viewCache {
	return &viewCache{fsys: fsys, max: max, m: map[string]*view{}}
}

// get returns the view of the file at path, up to date with the file.
func (c *viewCache) get(ctx context.Context, path string, leanMin int64) (*view, error) {
	lk, _ := c.load.LoadOrStore(path, &sync.Mutex{})
	mu := lk.(*sync.Mutex)
	mu.Lock()
	defer mu.Unlock()
	c.mu.Lock()
	v := c.m[path]
	c.touch(path)
	c.mu.Unlock()
	if v != nil {
		if _, err := v.refresh(ctx, leanMin); err != nil {
			c.drop(path)
			return nil, err
		}
		return v, nil
	}
	v, err := loadView(ctx, c.fsys, path, leanMin)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.m[path] = v
	c.touch(path)
	for len(c.order) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	return v, nil
}

// touch moves path to the end of the order; c.mu is held.
func (c *viewCache) touch(path string) {
	if i := slices.Index(c.order, path); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.order = append(c.order, path)
}

// drop forgets the view of path (its file changed under a page).
func (c *viewCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, path)
	if i := slices.Index(c.order, path); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
}
