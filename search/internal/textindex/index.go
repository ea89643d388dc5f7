package textindex

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/layout/vfs"
)

// ErrClosed is matched by the error of a call on a closed Index.
var ErrClosed = errors.New("text index is closed")

// Index is an open index: the segments its manifest lists. Searches run
// concurrently with each other, with a Builder's commit and with a
// Merge; each sees the segments of one manifest. One Builder and one
// Merge at a time may write an index, across processes too: the caller
// serialises writers (package search holds its index lock).
type Index struct {
	fsys vfs.FS
	dir  string

	mu     sync.Mutex // guards what follows
	m      manifest
	segs   []*segment
	closed bool

	wmu     sync.Mutex // one manifest writer (commit, merge) at a time
	mergeMu sync.Mutex
}

// Open opens the index in dir on fsys (vfs.OS() when nil). A missing
// manifest is an empty index (the directory is made by the first
// commit). A manifest or segment that is damaged, missing or not the
// one the manifest names is an error matching ErrCorrupt.
func Open(fsys vfs.FS, dir string) (*Index, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	ix := &Index{fsys: fsys, dir: dir}
	path := filepath.Join(dir, ManifestName)
	data, err := fsys.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ix, nil
	case err != nil:
		return nil, fmt.Errorf("open text index %s: %w", dir, err)
	}
	m, err := decodeManifest(path, data)
	if err != nil {
		return nil, err
	}
	for _, si := range m.segs {
		s, err := openSegment(fsys, dir, si)
		if err != nil {
			for _, o := range ix.segs {
				o.release()
			}
			return nil, err
		}
		s.refs = 1 // the index's own
		ix.segs = append(ix.segs, s)
	}
	ix.m = m
	return ix, nil
}

// Close closes the index's files once the searches under way are done.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	ix.closed = true
	for _, s := range ix.segs {
		s.release()
	}
	ix.segs = nil
	return nil
}

// Stats describes an index.
type Stats struct {
	Segments int
	Docs     int64
	Bytes    int64 // of the segment files
	MaxID    uint64
}

// Stats returns the index's segment count, documents and size.
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := Stats{Segments: len(ix.m.segs)}
	for _, s := range ix.m.segs {
		st.Docs += s.docs
		st.Bytes += s.size
		st.MaxID = s.maxID
	}
	return st
}

// snapshot returns the current segments, each acquired.
func (ix *Index) snapshot() ([]*segment, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil, ErrClosed
	}
	segs := slices.Clone(ix.segs)
	for _, s := range segs {
		s.acquire()
	}
	return segs, nil
}

func releaseAll(segs []*segment) {
	for _, s := range segs {
		s.release()
	}
}

// allocName reserves the name of a new segment file.
func (ix *Index) allocName() string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.m.next++
	return segName(ix.m.next)
}

// commit writes a manifest in which the segments of drop (a run of the
// current ones) are replaced by add, or add follows the current ones
// when drop is empty; then it makes that the index's state. The new
// segments' files must be durable; their names are made durable first.
func (ix *Index) commit(add []segInfo, drop []*segment) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	opened := make([]*segment, 0, len(add))
	fail := func(err error) error {
		for _, s := range opened {
			s.release()
		}
		return err
	}
	for _, si := range add {
		s, err := openSegment(ix.fsys, ix.dir, si)
		if err != nil {
			return fail(err)
		}
		s.refs = 1
		opened = append(opened, s)
	}
	if err := ix.fsys.SyncDir(ix.dir); err != nil {
		return fail(fmt.Errorf("sync directory %s: %w", ix.dir, err))
	}
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return fail(ErrClosed)
	}
	segs, infos, err := ix.replace(opened, add, drop)
	if err != nil {
		ix.mu.Unlock()
		return fail(err)
	}
	m := manifest{gen: ix.m.gen + 1, next: ix.m.next, segs: infos}
	ix.mu.Unlock()
	// Only commit changes the segments (wmu), so the state read above is
	// still the current one, except for next (allocName), which only grows.
	if err := vfs.WriteFileAtomic(ix.fsys, filepath.Join(ix.dir, ManifestName), m.encode(), vfs.FileMode); err != nil {
		return fail(fmt.Errorf("write text index manifest: %w", err))
	}
	ix.mu.Lock()
	old := ix.segs
	m.next = max(m.next, ix.m.next)
	ix.segs, ix.m = segs, m
	ix.mu.Unlock()
	for _, s := range old {
		if slices.Contains(drop, s) {
			s.mu.Lock()
			s.obsolete = true
			s.mu.Unlock()
			s.release()
		}
	}
	return nil
}

// replace computes the segment list of a commit (ix.mu held).
func (ix *Index) replace(opened []*segment, add []segInfo, drop []*segment) ([]*segment, []segInfo, error) {
	var segs []*segment
	var infos []segInfo
	at := len(ix.segs)
	if len(drop) > 0 {
		at = slices.Index(ix.segs, drop[0])
		if at < 0 || at+len(drop) > len(ix.segs) || !slices.Equal(ix.segs[at:at+len(drop)], drop) {
			return nil, nil, fmt.Errorf("commit text index %s: the merged segments are no longer the index's", ix.dir)
		}
	}
	segs = append(segs, ix.segs[:at]...)
	infos = append(infos, ix.m.segs[:at]...)
	segs = append(segs, opened...)
	infos = append(infos, add...)
	segs = append(segs, ix.segs[at+len(drop):]...)
	infos = append(infos, ix.m.segs[at+len(drop):]...)
	for i := 1; i < len(infos); i++ {
		if infos[i-1].maxID >= infos[i].minID {
			return nil, nil, fmt.Errorf("commit text index %s: document ids %d-%d do not follow %d", ix.dir, infos[i].minID, infos[i].maxID, infos[i-1].maxID)
		}
	}
	return segs, infos, nil
}

// RemoveLeftovers removes the files of the index directory that no
// manifest refers to: segments of a build or merge that crashed before
// its commit, and temporary files. Only a process that holds the index
// exclusively may call it (another process's commit under way would lose
// its segment).
func (ix *Index) RemoveLeftovers() error {
	ix.mu.Lock()
	keep := map[string]bool{ManifestName: true}
	for _, s := range ix.m.segs {
		keep[s.name] = true
	}
	ix.mu.Unlock()
	ents, err := ix.fsys.ReadDir(ix.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list text index %s: %w", ix.dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if keep[n] || e.IsDir() || !(strings.HasSuffix(n, ".seg") || vfs.IsTempName(n)) {
			continue
		}
		if err := ix.fsys.Remove(filepath.Join(ix.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", n, err)
		}
	}
	return nil
}
