package web

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// A view is what a session page knows of a session file: an engine.View
// of it, the one reader of session files (every entry's envelope indexed
// by package tree, the bytes of the entries that are not messages), kept
// with the file's stat and the tree model the pages draw. The bytes of
// message entries are kept too for a file below Options.leanMin; above it
// the View reads them back for the page shown (and checks them to be the
// lines that were parsed), so that a session of hundreds of megabytes is
// never held whole. A file that only grew is read on by View.Update; one
// that changed otherwise is read again. A file that is not a plain version
// 3 session (one to migrate, a damaged header) is read by the View as a
// read-only open does, which migrates it in memory or names the damage.

type view struct {
	open func(ctx context.Context, path string, keepBelow int64) (*engine.View, error)
	fsys vfs.FS
	path string
	mu   sync.RWMutex // guards st; held for reading while a page uses it
	st   *viewState
}

// viewState is a view's reading of the file.
type viewState struct {
	key       statKey
	ev        *engine.View
	header    jsonl.Header
	chunks    [][]*jsonl.Entry // the header and the entries, in file order, in the pieces they were read in
	ix        *tree.Index      // ev's tree: the View's own, which only its Update changes
	lean      bool             // message entries are detached
	malformed int
	gen       int // bumped whenever entries are added

	treeMu   sync.Mutex // guards the two below: pages build them under the view's read lock
	treeGen  int
	treeMemo *treeModel
}

// loadState reads the session file at path.
func (v *view) loadState(ctx context.Context, leanMin int64) (*viewState, error) {
	fi, err := v.fsys.Stat(v.path)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", v.path, notFound(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read session %s: not a regular file", v.path)
	}
	ev, err := v.open(ctx, v.path, leanMin)
	if err != nil {
		return nil, err
	}
	st := &viewState{key: keyOf(fi), ev: ev, header: ev.Header(), lean: ev.Lean(), malformed: ev.Malformed(), gen: 1}
	first := append([]*jsonl.Entry{&st.header.Entry}, ev.Entries()...)
	st.chunks = [][]*jsonl.Entry{first}
	ev.Index(func(ix *tree.Index) { st.ix = ix })
	return st, nil
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
	if k := keyOf(fi); k.ino != 0 && k.ino == v.st.key.ino && k.size > v.st.key.size {
		if added, err := v.st.ev.Update(); err == nil {
			if len(added) > 0 {
				v.st.chunks = append(v.st.chunks, added)
				v.st.gen++
			}
			v.st.key = k
			return true, nil
		}
	}
	st, err := v.loadState(ctx, leanMin)
	if err != nil {
		return false, err
	}
	_ = v.st.ev.Close()
	st.gen = v.st.gen + 1
	v.st = st
	return true, nil
}

// openView is how the view cache reads a session file: a View by the
// engine store of its directory, which keeps the messages of a file
// smaller than keepBelow.
func (h *Handler) openView(ctx context.Context, path string, keepBelow int64) (*engine.View, error) {
	return h.jsonlStore(filepath.Dir(path)).ViewWith(ctx, path, engine.ViewOptions{KeepBelow: keepBelow})
}

// close releases the view's file once no page uses it.
func (v *view) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	_ = v.st.ev.Close()
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", engine.ErrNotFound, err)
	}
	return err
}

// filled returns copies of es with their bytes: detached entries are read
// back from the file by the View, in runs of nearby lines, and checked to
// be the lines that were parsed (an error wrapping jsonl.ErrChanged when
// the file changed since).
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
// zero). The view's lock is held for reading.
func (v *view) fill(es []*jsonl.Entry, max int) ([]*jsonl.Entry, error) {
	out := make([]*jsonl.Entry, len(es))
	var want []*jsonl.Entry
	var at []int
	for i, e := range es {
		if _, n := e.Span(); e.Detached() && (max <= 0 || n <= max) {
			want = append(want, e)
			at = append(at, i)
			continue
		}
		c := *e
		out[i] = &c
	}
	if len(want) == 0 {
		return out, nil
	}
	// Lines reads in file order best: runs of nearby lines.
	order := make([]int, len(want))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(want[a].Offset, want[b].Offset) })
	sorted := make([]*jsonl.Entry, len(want))
	for i, k := range order {
		sorted[i] = want[k]
	}
	i := 0
	for e, err := range v.st.ev.Lines(sorted) {
		if err != nil {
			return nil, fmt.Errorf("read session %s: %w", v.path, err)
		}
		c := *e
		c.Raw = bytes.Clone(e.Raw) // the View reuses its buffer
		out[at[order[i]]] = &c
		i++
	}
	return out, nil
}

// viewCache keeps the views of the sessions looked at last.
type viewCache struct {
	open  func(ctx context.Context, path string, keepBelow int64) (*engine.View, error)
	fsys  vfs.FS
	mu    sync.Mutex
	max   int
	order []string // least recently used first
	m     map[string]*view
	load  sync.Map // path -> *sync.Mutex: one reading of a file at a time
}

// newViewCache returns a cache of max views, read by open through fsys.
func newViewCache(max int, fsys vfs.FS, open func(ctx context.Context, path string, keepBelow int64) (*engine.View, error)) *viewCache {
	return &viewCache{open: open, fsys: fsys, max: max, m: map[string]*view{}}
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
	v = &view{open: c.open, fsys: c.fsys, path: path}
	st, err := v.loadState(ctx, leanMin)
	if err != nil {
		c.drop(path)
		return nil, err
	}
	v.st = st
	var evicted []*view
	c.mu.Lock()
	if old := c.m[path]; old != nil {
		evicted = append(evicted, old)
	}
	c.m[path] = v
	c.touch(path)
	for len(c.order) > c.max {
		evicted = append(evicted, c.m[c.order[0]])
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	for _, old := range evicted {
		go old.close() // once the pages using it are done
	}
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
	v := c.m[path]
	delete(c.m, path)
	if i := slices.Index(c.order, path); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.mu.Unlock()
	if v != nil {
		go v.close()
	}
}

// closeAll releases every view's file (the handler is closed).
func (c *viewCache) closeAll() {
	c.mu.Lock()
	views := c.m
	c.m, c.order = map[string]*view{}, nil
	c.mu.Unlock()
	for _, v := range views {
		v.close()
	}
}
