package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/search/internal/textindex"
)

// Engine is the full-text index a search uses (Options.Engine).
type Engine uint8

const (
	// EngineDefault is the default engine, EngineOwn.
	EngineDefault Engine = iota
	// EngineFTS5 is the SQLite FTS5 index (index.go, update.go).
	EngineFTS5
	// EngineOwn is sessctl's own inverted index (search/internal/textindex),
	// kept in <Dir>/own: the term dictionary and postings as segment files,
	// a table of the documents' places and the state of the files indexed.
	// It answers the same queries as EngineFTS5; a query with FTS5 syntax
	// it does not evaluate itself (column filters, ^, +, NEAR under NOT)
	// is answered by reading the files, as with Options.NoIndex. A search
	// that finds the index current holds the index lock shared, so
	// searches of several processes run at once; one that updates it
	// holds it exclusive. A merge of many segments runs after the answer:
	// Close waits for it.
	EngineOwn
)

// String returns the engine's name: "fts5" or "own".
func (e Engine) String() string {
	switch e {
	case EngineFTS5:
		return "fts5"
	case EngineOwn:
		return "own"
	}
	return "default"
}

// ParseEngine returns the engine named s ("fts5", "own", or "" for
// EngineDefault).
func ParseEngine(s string) (Engine, error) {
	switch s {
	case "":
		return EngineDefault, nil
	case "fts5":
		return EngineFTS5, nil
	case "own":
		return EngineOwn, nil
	}
	return 0, fmt.Errorf("unknown search engine %q (fts5 or own)", s)
}

// defaultEngine is what EngineDefault means: EngineOwn, since the
// search suite passes on it (EngineFTS5 stays selectable). Tests set it
// (SESSCTL_SEARCH_ENGINE) to run the suite against either engine.
var defaultEngine = EngineOwn

// Files of the own engine, in <Dir>/own.
const (
	ownDirName   = "own"
	ownTextDir   = "text"  // the textindex
	ownDocsName  = "docs"  // a docRecSize record per document, by id
	ownStateName = "state" // the files and sessions indexed (ownstatecodec.go), and ownLogName
	ownVersion   = 4       // 2: Times; 3: Gen, the log; 4: binary (ownstatecodec.go)
	ownRecSize   = 28      // file uint32, part uint32, off int64, len int64, CRC-32C of them
	ownTimeBlock = 256
)

// ownState is what the own engine knows of the files it indexed. A
// file's documents carry its number (Ref): a file indexed again from the
// start gets a new number, so its old documents, which the textindex
// keeps (it deletes nothing), name a number no file has and are left out
// of every answer. MaxID is the textindex's after the update that wrote
// this state: an index whose MaxID differs (a crash between the commit
// and this state's write) is built again.
type ownState struct {
	Version  int
	MaxID    uint64
	NextFile uint32
	Files    map[string]*ownFile
	Sessions map[string]*ownSession
	Dead     uint64 // documents of files replaced or gone
	// Times is, for each run of ownTimeBlock document ids (the first
	// ids 1 to ownTimeBlock), the newest time of its texts (dead ones
	// too): a query with a limit walks the ids down and stops once no
	// older id can hold a text newer than the hits it has.
	Times []int64
	// Stamps are the stats of the index's other files (the docs table,
	// the textindex's manifest and segments) as this state's update left
	// them: a file that differs was changed by another program (or a
	// process killed before it wrote the state) and the index is built
	// again.
	Stamps map[string]ownStamp
	// Gen names this base: the log of its changes names it too (ownlog.go).
	Gen uint64

	saved ownSaved // not in the file
}

// ownStamp is what a file's stat says.
type ownStamp struct {
	Size, Mtime, Ctime int64
	ID                 uint64
}

// ownStamps returns the stamps of the index's files but the state.
func (o *own) stamps() (map[string]ownStamp, error) {
	fsys := o.x.fsys()
	out := map[string]ownStamp{}
	add := func(rel string) error {
		fi, err := fsys.Stat(filepath.Join(o.dir, rel))
		if err != nil {
			return err
		}
		out[rel] = ownStamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ctime: vfs.ChangeTime(fi), ID: vfs.FileID(fi)}
		return nil
	}
	if err := add(ownDocsName); err != nil {
		return nil, err
	}
	ents, err := fsys.ReadDir(filepath.Join(o.dir, ownTextDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range ents {
		if n := e.Name(); n == textindex.ManifestName || strings.HasSuffix(n, ".seg") {
			if err := add(filepath.Join(ownTextDir, n)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

type ownFile struct {
	No                  uint32
	Session             string
	Kind                fileKind
	Size, Mtime         int64
	Ino                 uint64
	Ctime, End, TailOff int64
	TailCRC             uint32
	Docs                uint64
}

type ownSession struct {
	Format        layout.Format
	ID, Name, Cwd string
}

func (r *ownFile) unchanged(f *found) bool {
	return r.Kind == f.kind && r.Size == f.size && r.Mtime == f.mtime && r.Mtime != 0 && r.Ino == f.ino && r.Ctime == f.ctime
}

func newOwnState() *ownState {
	return &ownState{Version: ownVersion, NextFile: 1, Files: map[string]*ownFile{}, Sessions: map[string]*ownSession{}}
}

// own is an open own index, for one search (index lock held shared to
// read it, exclusive to write it).
type own struct {
	x    *Index
	dir  string
	ix   *textindex.Index
	st   *ownState
	docs vfs.File
	byNo map[uint32]string
}

func (x *Index) ownDir() string { return filepath.Join(x.dir, ownDirName) }

// ownSearch is Index.search for EngineOwn: the lock is taken shared, and
// a search that finds the index current (nothing to index, nothing gone)
// queries it so; one that must update it takes the lock exclusive for the
// update and the query (one writer at a time; searches of other processes
// wait). With a watch (Options.Watch), a search that finds
// nothing changed since the last one found the index current, and the
// index's state as that search left it, only queries.
func (x *Index) ownSearch(ctx context.Context, sn *snipper, q Query, warn func(error)) ([]candidate, error) {
	// A merge the last search left running changes the state's tag,
	// which the record of that search is then given.
	_ = x.waitOwnMerge() // it failed safely: the next merge tries again
	key := storesKey(q.Stores)
	if x.w != nil && x.clean.ok && x.clean.key == key && x.clean.gen == x.w.generation() {
		cands, err := x.ownSearch1(ctx, sn, q, warn, true, "")
		if !errors.Is(err, errChanged) {
			return cands, err
		}
	}
	prev := x.clean
	x.clean = cleanState{}
	var base string // the state the last search found current with its walk
	if prev.ok && prev.key == key && len(prev.tags) == 1 {
		base = prev.tags[0]
	}
	return x.ownSearch1(ctx, sn, q, warn, false, base)
}

// planDelta is what a watched Index knows changed since the last search
// that found the index current: the files its walk stat'ed again (the
// others are as that walk found them, and the state tagged base was
// current with them). A plan against that same state looks only at
// these files, not at every file of the stores.
type planDelta struct {
	base  string
	paths []string
	at    map[string]int // path -> index in the search's files
}

func (x *Index) ownSearch1(ctx context.Context, sn *snipper, q Query, warn func(error), current bool, base string) (cands []candidate, err error) {
	_ = x.waitOwnMerge() // it failed safely: the next merge tries again
	if err := checkIndexDir(x.dir, q.Stores); err != nil {
		return nil, err
	}
	walkErr := false // the stores', not the index's
	defer func() {
		if err != nil && !walkErr && !errors.Is(err, ErrQuery) && !errors.Is(err, errChanged) && ctx.Err() == nil && !errors.Is(err, ErrIndex) {
			err = &indexError{err}
		}
	}()
	if err := x.fsys().MkdirAll(x.dir, vfs.DirMode); err != nil {
		return nil, fmt.Errorf("open search index %s: %w", x.dir, err)
	}
	lk, err := lockShared(ctx, x.fsys(), x.dir)
	if err != nil {
		return nil, err
	}
	x.lock = lk
	handed := false // to the merge, which releases it
	defer func() {
		if handed {
			return
		}
		if rerr := lk.release(); err == nil {
			err = rerr
		}
		x.lock = nil
	}()
	read := !x.o.Rebuild || x.rebuilt
	x.dirs, x.readSt = nil, nil
	defer func() { x.dirs, x.readSt = nil, nil }() // (the listings are not held between searches, nor a state read)
	var files []found
	var gen uint64
	var d *planDelta
	watched := false
	var pre chan openedOwn // the index, opened to read while the walk runs
	if !current {
		if read {
			// Its state is decoded on one CPU while the walk lists the
			// stores' directories on the other.
			pre = make(chan openedOwn, 1)
			go func() {
				o, err := x.openOwn(openRead)
				pre <- openedOwn{o, err}
			}()
		}
		var changed []string
		var restated bool
		files, gen, watched, changed, restated, err = x.walkWatched(ctx, q.Stores, warn)
		if err != nil {
			if pre != nil {
				if r := <-pre; r.o != nil {
					r.o.close()
				}
			}
			walkErr = true
			return nil, err
		}
		if restated && base != "" {
			d = &planDelta{base: base, paths: changed, at: x.walked.at}
		}
	}
	if read {
		// An index that is current is only read: under the lock shared,
		// searches of several processes run at once.
		var tag string
		var ok bool
		cands, tag, ok, err = x.ownRead(ctx, sn, files, d, q, current, pre)
		if ok {
			if err == nil && watched && tag != "" && !x.hasWarned() {
				x.clean = cleanState{ok: true, key: storesKey(q.Stores), gen: gen, tags: []string{tag}}
			}
			return cands, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if current {
			return nil, errChanged
		}
	}
	if err := lk.exclusive(ctx); err != nil {
		return nil, err
	}
	if x.o.Rebuild && !x.rebuilt {
		if err := x.fsys().RemoveAll(x.ownDir()); err != nil {
			return nil, fmt.Errorf("rebuild search index %s: %w", x.ownDir(), err)
		}
		x.rebuilt = true
	}
	for attempt := 0; ; attempt++ {
		var tag string
		var merge *own
		cands, tag, merge, err = x.ownOnce(ctx, sn, files, d, q, current)
		if err != nil && errors.Is(err, textindex.ErrCorrupt) && attempt < 1 && !current {
			// Never the source of truth: built again.
			if err := x.fsys().RemoveAll(x.ownDir()); err != nil {
				return nil, fmt.Errorf("rebuild search index %s: %w", x.ownDir(), err)
			}
			continue
		}
		if err != nil && current {
			return nil, errChanged // the full path repairs what is wrong
		}
		if err == nil && watched && tag != "" && !x.hasWarned() {
			x.clean = cleanState{ok: true, key: storesKey(q.Stores), gen: gen, tags: []string{tag}}
		}
		if err == nil && x.dirs != nil {
			// An update as long as a first build confirms the listings
			// its walk kept (and, on a first build, saves them now that
			// there is a directory), so the next search lists nothing.
			x.dirs.confirm()
			x.dirs.save()
		}
		if merge != nil {
			// The answer first: the merge goes on after this search
			// returns, with the lock held exclusive, and Close (or the
			// next search) waits for it.
			handed = true
			x.ownMerge = startOwnMerge(ctx, merge, lk, tag)
		}
		return cands, err
	}
}

func (x *Index) hasWarned() bool {
	x.warnMu.Lock()
	defer x.warnMu.Unlock()
	return len(x.warned) > 0
}

// openedOwn is an index opened to read, or why it was not.
type openedOwn struct {
	o   *own
	err error
}

// ownRead answers q from the index as it is, without writing anything,
// when it is trusted and up to date with files (when current: as the
// last search left it). ok is false when it is not: the caller takes the
// lock exclusive and updates (or repairs) it. The index is pre's when
// that is not nil (opened under the same lock), else opened here.
func (x *Index) ownRead(ctx context.Context, sn *snipper, files []found, d *planDelta, q Query, current bool, pre chan openedOwn) (cands []candidate, tag string, ok bool, err error) {
	var o *own
	if pre != nil {
		r := <-pre
		o, err = r.o, r.err
	} else {
		o, err = x.openOwn(openRead)
	}
	if err != nil {
		return nil, "", false, nil
	}
	defer o.close()
	e, exact := parseFTS(q.Text)
	tag = o.stateTag()
	if current {
		if !exact || tag != x.clean.tags[0] {
			return nil, "", false, nil
		}
	} else if work, _, drops := o.plan(files, d, q.Stores); len(work) > 0 || len(drops) > 0 {
		// Behind: the update that follows (lock exclusive) starts from
		// this state when no writer came in between.
		x.readSt = &stateCache{tag: tag, st: o.st}
		return nil, "", false, nil
	}
	if !exact {
		cands, err = scan(ctx, x.fsys(), sn, files, q, x.warn)
		return cands, tag, err == nil, err
	}
	cands, err = o.query(ctx, e, q)
	if err != nil {
		// A damaged index is for the exclusive path to repair.
		return nil, "", ctx.Err() != nil || errors.Is(err, ErrQuery), err
	}
	// An index another process brought up to date is kept as this one
	// read it, so the next search neither decodes it nor shortens its
	// ids again.
	x.keepState(o, tag)
	return cands, tag, true, nil
}

// ownOnce opens the index, brings it up to date with files (not when
// current: then the index must be as the last search left it, its state
// file's tag the one recorded) and queries it. It returns the state
// file's tag after the update.
//
// When the index has many segments it returns itself open (merge), for
// the caller to merge them after the answer; else it is closed.
func (x *Index) ownOnce(ctx context.Context, sn *snipper, files []found, d *planDelta, q Query, current bool) (cands []candidate, tag string, merge *own, err error) {
	mode := openReset
	if current {
		mode = openWrite
	}
	o, err := x.openOwn(mode)
	if err != nil {
		return nil, "", nil, err
	}
	defer func() {
		if err == nil && o.ix.Stats().Segments > ownMaxSegments {
			merge = o
			return
		}
		o.close()
	}()
	e, exact := parseFTS(q.Text)
	if current {
		if !exact || o.stateTag() != x.clean.tags[0] {
			return nil, "", nil, errChanged
		}
	} else if err := o.update(ctx, files, d, q.Stores); err != nil {
		return nil, "", nil, err
	}
	tag = o.stateTag()
	x.keepState(o, tag)
	if !exact {
		// Syntax the own index does not evaluate: read the files.
		cands, err = scan(ctx, x.fsys(), sn, files, q, x.warn)
		return cands, tag, nil, err
	}
	cands, err = o.query(ctx, e, q)
	return cands, tag, nil, err
}

// ownMaxSegments is the most segments an index keeps: many small
// updates' segments are then merged into one.
const ownMaxSegments = 8

// ownMerger is a merge under way after a search's answer.
type ownMerger struct {
	done chan struct{}
	err  error
	from string // the state's tag before the merge, and after it
	to   string
}

// startOwnMerge merges o's segments in a goroutine, with lk (held
// exclusive) released when it is done. The merge keeps its safety: the
// new segment is checksummed and durable before the manifest that names
// it replaces the old one atomically, so a crash leaves the old set
// whole; the state's stamps are written after.
func startOwnMerge(ctx context.Context, o *own, lk *indexLock, tag string) *ownMerger {
	m := &ownMerger{done: make(chan struct{}), from: tag}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer close(m.done)
		m.err = o.merge(ctx)
		if m.err == nil {
			m.to = o.stateTag()
		}
		o.close()
		if err := lk.release(); m.err == nil {
			m.err = err
		}
	}()
	return m
}

// waitOwnMerge waits for the merge the last search left running, if
// any, and returns its error.
func (x *Index) waitOwnMerge() error {
	m := x.ownMerge
	if m == nil {
		return nil
	}
	<-m.done
	x.ownMerge, x.lock = nil, nil
	if m.err == nil && x.clean.ok && len(x.clean.tags) == 1 && x.clean.tags[0] == m.from {
		x.clean.tags = []string{m.to} // the merge's state is this process's
	}
	if m.err == nil && x.stCache != nil && x.stCache.tag == m.from {
		x.stCache.tag = m.to // the merge saved the kept state itself
	}
	if m.err != nil {
		return &indexError{fmt.Errorf("merge search index segments: %w", m.err)}
	}
	return nil
}

// merge merges the index's newest segments (those of small updates,
// not a first build's large ones) into one and records the result.
func (o *own) merge(ctx context.Context) error {
	if err := o.ix.MergeNewest(ctx, ownMaxSegments-2); err != nil {
		return err
	}
	// The merged segments' files go when the index is closed (no
	// search of this process uses them); then the stamps are taken.
	if err := o.ix.Close(); err != nil {
		o.ix = nil
		return err
	}
	ix, err := textindex.Open(o.x.fsys(), filepath.Join(o.dir, ownTextDir))
	if err != nil {
		o.ix = nil
		return err
	}
	o.ix = ix
	if err := o.ix.RemoveLeftovers(); err != nil {
		return err
	}
	return o.saveState()
}

// stateTag identifies the state as it is on disk, the base file and its
// log: every update writes a new base (another inode, another change
// time) or appends to the log (another size).
func (o *own) stateTag() string {
	fsys := o.x.fsys()
	st := stampOf(fsys, filepath.Join(o.dir, ownStateName))
	if !st.exists {
		return ""
	}
	lg := stampOf(fsys, filepath.Join(o.dir, ownLogName))
	return fmt.Sprint(st.size, st.mtime, st.ctime, st.id, "+", lg.exists, lg.size, lg.mtime, lg.ctime, lg.id)
}

// How openOwn opens the index.
type ownMode uint8

const (
	openRead  ownMode = iota // trusted or errChanged; nothing written (lock shared)
	openWrite                // trusted or errChanged (lock exclusive)
	openReset                // one not trusted is emptied (lock exclusive)
)

// openOwn opens the own index; one that cannot be trusted (no state, a
// state of another version or that disagrees with the textindex) is
// emptied first with openReset, else errChanged.
func (x *Index) openOwn(mode ownMode) (*own, error) {
	fsys := x.fsys()
	dir := x.ownDir()
	o := &own{x: x, dir: dir}
	st, serr := x.readStateCached(mode != openRead)
	ix, err := textindex.Open(fsys, filepath.Join(dir, ownTextDir))
	if err == nil && serr == nil {
		docsSize := int64(-1)
		if fi, err := fsys.Stat(filepath.Join(dir, ownDocsName)); err == nil {
			docsSize = fi.Size()
		}
		o.ix = ix
		cur, err := o.stamps()
		// Dead documents are never deleted: when they are half the index,
		// it is built again.
		tooDead := st.MaxID > 1<<16 && st.Dead > st.MaxID/2
		times := (st.MaxID + ownTimeBlock - 1) / ownTimeBlock
		if err != nil || tooDead || uint64(len(st.Times)) != times || !maps.Equal(cur, st.Stamps) || ix.Stats().MaxID != st.MaxID || docsSize != int64(st.MaxID)*ownRecSize {
			o.ix = nil
		} else {
			o.st = st
		}
	}
	if o.ix == nil {
		if ix != nil {
			ix.Close()
		}
		if mode != openReset {
			return nil, errChanged
		}
		if err := fsys.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("reset search index %s: %w", dir, err)
		}
		if err := vfs.MkdirAllSync(fsys, dir, vfs.DirMode); err != nil {
			return nil, fmt.Errorf("create search index %s: %w", dir, err)
		}
		if o.ix, err = textindex.Open(fsys, filepath.Join(dir, ownTextDir)); err != nil {
			return nil, err
		}
		o.st = newOwnState()
	} else if mode != openRead {
		if err := o.ix.RemoveLeftovers(); err != nil {
			o.ix.Close()
			return nil, err
		}
	}
	if mode == openRead {
		// Trusted: the table is MaxID records long (its stamp and size
		// were checked above).
		f, err := fsys.OpenFile(filepath.Join(dir, ownDocsName), os.O_RDONLY, 0)
		if err != nil {
			o.ix.Close()
			return nil, errChanged
		}
		o.docs = f
		o.mapFiles()
		return o, nil
	}
	f, err := fsys.OpenFile(filepath.Join(dir, ownDocsName), os.O_RDWR|os.O_CREATE|os.O_APPEND, vfs.FileMode)
	if err != nil {
		o.ix.Close()
		return nil, fmt.Errorf("open search index %s: %w", dir, err)
	}
	// Records past MaxID are of an update that never committed. (Only a
	// file of another size is truncated: a truncate changes its times,
	// which its stamp records.)
	want := int64(o.st.MaxID) * ownRecSize
	fi, err := f.Stat()
	if err == nil && fi.Size() != want {
		err = f.Truncate(want)
	}
	if err != nil {
		f.Close()
		o.ix.Close()
		return nil, fmt.Errorf("open search index %s: %w", dir, err)
	}
	o.docs = f
	o.mapFiles()
	return o, nil
}

// mapFiles sets o.byNo, kept with the state (a watched Index's next
// search uses it again, and drop and renumber keep it current).
func (o *own) mapFiles() {
	st := o.st
	if st.saved.byNo == nil {
		st.saved.byNo = make(map[uint32]string, len(st.Files))
		for p, r := range st.Files {
			st.saved.byNo[r.No] = p
		}
	}
	o.byNo = st.saved.byNo
}

func (o *own) close() {
	if o.docs != nil {
		o.docs.Close()
	}
	if o.ix != nil {
		o.ix.Close()
	}
}

func readOwnState(fsys vfs.FS, path string) (*ownState, error) {
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 4 || crc32.Checksum(data[4:], crcTable) != binary.LittleEndian.Uint32(data) {
		return nil, fmt.Errorf("%s: %w", path, textindex.ErrCorrupt)
	}
	// Another version (a v3 gob) is damage too: the index is built again.
	st, err := decodeOwnState(data[4:])
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, textindex.ErrCorrupt)
	}
	if st.Files == nil {
		st.Files = map[string]*ownFile{}
	}
	if st.Sessions == nil {
		st.Sessions = map[string]*ownSession{}
	}
	if err := readOwnLog(fsys, path, st, int64(len(data))); err != nil {
		return nil, err
	}
	return st, nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ownBudget bounds the memory of the own engine's in-memory tables
// (textindex.BuildOptions.Budget).
const ownBudget = 32 << 20

// ownWriter indexes files into the own index.
type ownWriter struct {
	o      *own
	b      *textindex.Builder
	nextID uint64
	recs   []byte
	docs   []doc
	buf    []byte
}

// update brings the index up to date with files, the files found under
// roots, as update does for FTS5: unchanged files are skipped, a file
// that only grew is indexed from where the last indexing stopped, and
// any other change (replaced, shrunk, edited in place) gives the file a
// new number and indexes it whole; the old number's documents are dead.
func (o *own) update(ctx context.Context, files []found, d *planDelta, stores []layout.Place) error {
	st := o.st
	work, total, drops := o.plan(files, d, stores)
	for _, path := range drops {
		st.touch(path, st.Files[path].Session)
		o.drop(path, st.Files[path])
	}
	if len(work) == 0 && len(drops) == 0 {
		return nil
	}
	// Time order: the documents' ids grow with the files' times, so the
	// newest texts have the highest ids.
	slices.SortStableFunc(work, func(a, b *found) int {
		if a.mtime != b.mtime {
			if a.mtime < b.mtime {
				return -1
			}
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	// The tables' memory is bounded by a quarter of the bytes to index,
	// and by ownBudget: a small update takes little memory, a first build
	// a fixed amount.
	budget := min(max(total/4, textindex.MinBudget), ownBudget)
	w := &ownWriter{o: o, b: o.ix.NewBuilder(textindex.BuildOptions{Budget: budget}), nextID: st.MaxID + 1}
	defer w.b.Close()
	if err := o.index(ctx, w, work, total); err != nil {
		w.b.Abort()
		return err
	}
	if err := w.flushRecs(); err != nil {
		w.b.Abort()
		return err
	}
	if err := o.docs.Sync(); err != nil {
		w.b.Abort()
		return fmt.Errorf("update search index %s: %w", o.dir, err)
	}
	if err := w.b.Commit(); err != nil {
		return err
	}
	// The tables' memory goes before the state is made: a first build's
	// peak was the two together.
	w.b.Close()
	st.MaxID = o.ix.Stats().MaxID
	st.forgetUnused()
	return o.saveState()
}

// plan returns what update has to do: the files to index (and the bytes
// to read of them) and the files indexed under roots that are gone. With
// d, and the state the one d names, only d's files can need indexing and
// none is gone: the plan is as long as the change, not the stores.
func (o *own) plan(files []found, d *planDelta, stores []layout.Place) (work []*found, total int64, drops []string) {
	st := o.st
	rs := roots(stores)
	matched := 0 // files of the walk the state has
	need := func(f *found) {
		r := st.Files[f.path]
		if r != nil {
			matched++
			if r.unchanged(f) {
				return
			}
		}
		work = append(work, f)
		if r != nil && r.Kind == fileJSONL && f.size >= r.End && r.Ino == f.ino {
			total += f.size - r.End
		} else {
			total += f.size
		}
	}
	if d != nil && d.base == o.stateTag() {
		o.x.planned = len(d.paths)
		for _, p := range d.paths {
			if i, ok := d.at[p]; ok && i < len(files) && files[i].path == p {
				need(&files[i])
			}
		}
		return work, total, nil
	}
	o.x.planned = len(files) + len(st.Files)
	for i := range files {
		need(&files[i])
	}
	// Gone are the state's files under the roots the walk did not find.
	// When no store lies in another of its format, the walk found each
	// file once, and when it found as many of the state's as the state
	// holds under the roots, none is gone.
	if apart(stores, rs) {
		under := 0
		for path := range st.Files {
			for _, root := range rs {
				if isUnder(path, root) {
					under++
					break
				}
			}
		}
		if under == matched {
			return work, total, nil
		}
	}
	seen := make(map[string]bool, len(files))
	for i := range files {
		seen[files[i].path] = true
	}
	for path := range st.Files {
		if seen[path] {
			continue
		}
		for _, root := range rs {
			if isUnder(path, root) {
				drops = append(drops, path)
				break
			}
		}
	}
	return work, total, drops
}

// apart reports whether no store lies in (or is) another of the same
// format, rs being their roots: the walk then finds each file once (the
// two formats' walks of one directory find files of other names).
func apart(stores []layout.Place, rs []string) bool {
	if len(rs) != len(stores) {
		return false // a root that could not be made absolute
	}
	for i := range stores {
		for j := range stores {
			if i != j && stores[i].Format == stores[j].Format && isUnder(rs[i], rs[j]) {
				return false
			}
		}
	}
	return true
}

// saveState records the files' stamps and writes the state.
func (o *own) saveState() error {
	st, err := o.stamps()
	if err != nil {
		return fmt.Errorf("update search index %s: %w", o.dir, err)
	}
	o.st.Stamps = st
	if err := o.writeState(); err != nil {
		return fmt.Errorf("update search index %s: %w", o.dir, err)
	}
	return nil
}

// drop forgets a file: its documents are dead.
func (o *own) drop(path string, r *ownFile) {
	delete(o.st.Files, path)
	delete(o.byNo, r.No)
	o.st.ref(r.Session, -1)
	o.st.Dead += r.Docs
}

// renumber gives a file indexed again from the start a new number.
func (o *own) renumber(f found) *ownFile {
	if r := o.st.Files[f.path]; r != nil {
		o.drop(f.path, r)
	}
	r := &ownFile{No: o.st.NextFile, Session: f.session, Kind: f.kind}
	o.st.NextFile++
	o.st.Files[f.path] = r
	o.byNo[r.No] = f.path
	o.st.ref(f.session, 1)
	return r
}

func (w *ownWriter) add(r *ownFile, off, n, ts int64) error {
	for i, d := range w.docs {
		id := w.nextID
		if err := w.b.Add(textindex.Doc{ID: id, Text: d.text, Role: uint8(d.kind), Tool: d.tool, Ref: uint64(r.No), Time: ts}); err != nil {
			return err
		}
		w.nextID++
		w.o.st.noteTime(id, ts)
		var rec [ownRecSize]byte
		binary.LittleEndian.PutUint32(rec[0:], r.No)
		binary.LittleEndian.PutUint32(rec[4:], uint32(i))
		binary.LittleEndian.PutUint64(rec[8:], uint64(off))
		binary.LittleEndian.PutUint64(rec[16:], uint64(n))
		binary.LittleEndian.PutUint32(rec[24:], crc32.Checksum(rec[:24], crcTable))
		w.recs = append(w.recs, rec[:]...)
		r.Docs++
	}
	if len(w.recs) >= 1<<20 {
		return w.flushRecs()
	}
	return nil
}

// noteTime records that document id has a text of time ts.
func (st *ownState) noteTime(id uint64, ts int64) {
	b := int((id - 1) / ownTimeBlock)
	for len(st.Times) <= b {
		st.Times = append(st.Times, math.MinInt64)
	}
	st.Times[b] = max(st.Times[b], ts)
}

func (w *ownWriter) flushRecs() error {
	if len(w.recs) == 0 {
		return nil
	}
	if _, err := w.o.docs.Write(w.recs); err != nil {
		return fmt.Errorf("update search index %s: %w", w.o.dir, err)
	}
	w.recs = w.recs[:0]
	return nil
}

func (w *ownWriter) readAt(fh vfs.File, off, n int64) ([]byte, error) {
	if int64(cap(w.buf)) < n {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	k, err := fh.ReadAt(b, off)
	if err != nil && !(int64(k) == n) {
		return nil, err
	}
	return b, nil
}

func (w *ownWriter) indexAgentUse(fh vfs.File, f found, mtime int64) (int64, error) {
	o := w.o
	r := o.renumber(f)
	se := o.st.Sessions[f.session]
	if se == nil {
		se = &ownSession{Format: layout.FormatAgentUse}
		o.st.Sessions[f.session] = se
	}
	data, err := w.readAt(fh, 0, f.size)
	if err != nil {
		o.x.warn(fmt.Errorf("read %s: %w", f.path, err))
		o.drop(f.path, r)
		return 0, nil
	}
	var entry string
	var ts int64
	w.docs, entry, ts = agentUseDocs(f.kind, data, w.docs[:0])
	if f.kind == fileAUSession {
		obj := trimWS(data)
		se.ID = auEntry(f.kind, f.path, entry)
		se.Name, se.Cwd = lookupString(obj, "agent", "name"), lookupString(obj, "project", "cwd")
	}
	if err := w.add(r, 0, f.size, ts); err != nil {
		return 0, err
	}
	r.Size, r.Mtime, r.Ino, r.Ctime = f.size, mtime, f.ino, f.ctime
	r.End = f.size
	return f.size, nil
}

// auEntry is the entry id of an AgentUse file's texts: the id its JSON
// gives, else its file's (or, for a message, its directory's) name.
func auEntry(kind fileKind, path, entry string) string {
	if entry != "" {
		return entry
	}
	if kind == fileAUMessage {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(filepath.Base(path), ".json")
}

// query evaluates e with the query's filters and returns the candidates,
// sorted as FTS5's are. With a limit (and an exact e) only the first
// q.Limit+16 candidates of that order are returned, and only theirs are
// read from the docs table; a term or phrase query stops walking its
// postings once no older document can be among them (ownState.Times).
func (o *own) query(ctx context.Context, e *ftsExpr, q Query) ([]candidate, error) {
	o.x.hitIDs = o.shortIDs(q.Stores)
	filter := o.filter(q)
	k := 0
	if q.Limit > 0 && e.exact {
		k = q.Limit + 16
	}
	var hits []textindex.Meta
	if e.op == opLeaf && k > 0 {
		var err error
		if hits, err = o.leafTop(ctx, e, filter, k); err != nil {
			return nil, err
		}
	} else {
		m, err := o.eval(ctx, e, filter)
		if err != nil {
			return nil, err
		}
		hits = slices.AppendSeq(make([]textindex.Meta, 0, len(m)), maps.Values(m))
	}
	if k > 0 && len(hits) > k {
		// The first k candidates are among the texts at least as new as
		// the k-th newest: the others need no record.
		var top topTimes
		for _, m := range hits {
			top.add(m.Time, k)
		}
		hits = slices.DeleteFunc(hits, func(m textindex.Meta) bool { return m.Time < top.t[0] })
	}
	out, err := o.candidates(hits)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b candidate) int { return compareCandidates(&a, &b) })
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// filter returns the test of a document against the query's roles,
// tools, times, stores and working directory (a dead document fails it).
func (o *own) filter(q Query) func(textindex.Meta) bool {
	rs := roots(q.Stores)
	var kinds [256]bool
	if q.Role != "" {
		for _, k := range kindsOf(q.Role) {
			kinds[k] = true
		}
	}
	since, until := q.Since.UnixMilli(), q.Until.UnixMilli()
	var cwd, cwdLo string
	if q.Cwd != "" {
		cwd = cleanCwd(q.Cwd)
		cwdLo, _ = prefixBounds(cwd)
	}
	okFile := map[uint32]bool{}
	return func(m textindex.Meta) bool {
		if q.Role != "" && !kinds[m.Role] {
			return false
		}
		if q.Tool != "" && m.Tool != q.Tool {
			return false
		}
		if !q.Since.IsZero() && m.Time < since {
			return false
		}
		if !q.Until.IsZero() && (m.Time >= until || m.Time == 0) {
			return false
		}
		no := uint32(m.Ref)
		ok, known := okFile[no]
		if !known {
			path, live := o.byNo[no]
			ok = live
			if ok && len(rs) > 0 {
				ok = false
				for _, r := range rs {
					if isUnder(path, r) {
						ok = true
						break
					}
				}
			}
			if ok && q.Cwd != "" {
				se := o.st.Sessions[o.st.Files[path].Session]
				ok = se != nil && (se.Cwd == cwd || strings.HasPrefix(se.Cwd, cwdLo))
			}
			okFile[no] = ok
		}
		return ok
	}
}

// leafTop returns the documents of a leaf that pass filter, walking the
// ids down until it holds k of them and no document at or below the
// next id has a text newer than the k-th newest it holds: those can
// come only after the first k in compareCandidates' order (a text as new
// as the k-th is still read, for the order of equal times).
func (o *own) leafTop(ctx context.Context, e *ftsExpr, filter func(textindex.Meta) bool, k int) ([]textindex.Meta, error) {
	// newest[b]: the newest time of the ids up to the end of block b.
	newest := make([]int64, len(o.st.Times))
	run := int64(math.MinInt64)
	for b, t := range o.st.Times {
		run = max(run, t)
		newest[b] = run
	}
	var top topTimes
	var out []textindex.Meta
	q := textindex.Query{Clauses: e.clauses,
		Filter: func(m textindex.Meta) bool {
			if !filter(m) {
				return false
			}
			top.add(m.Time, k)
			out = append(out, m)
			return false // kept here: Search need not collect them
		},
		Stop: func(m textindex.Meta) bool {
			b := (m.ID - 1) / ownTimeBlock
			return len(top.t) >= k && m.ID > 0 && b < uint64(len(newest)) && newest[b] < top.t[0]
		},
	}
	if _, err := o.ix.Search(ctx, q); err != nil {
		return nil, err
	}
	return out, nil
}

// topTimes holds the k newest times added, the oldest of them first (a
// min-heap).
type topTimes struct{ t []int64 }

func (h *topTimes) add(ts int64, k int) {
	if len(h.t) < k {
		h.t = append(h.t, ts)
		for i := len(h.t) - 1; i > 0; {
			p := (i - 1) / 2
			if h.t[p] <= h.t[i] {
				break
			}
			h.t[p], h.t[i] = h.t[i], h.t[p]
			i = p
		}
		return
	}
	if ts <= h.t[0] {
		return
	}
	h.t[0] = ts
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h.t) && h.t[l] < h.t[m] {
			m = l
		}
		if r := l + 1; r < len(h.t) && h.t[r] < h.t[m] {
			m = r
		}
		if m == i {
			return
		}
		h.t[m], h.t[i] = h.t[i], h.t[m]
		i = m
	}
}

// candidates reads the docs table's records of hits.
func (o *own) candidates(hits []textindex.Meta) ([]candidate, error) {
	sessions := map[string]*Session{}
	out := make([]candidate, 0, len(hits))
	var rec [ownRecSize]byte
	for _, m := range hits {
		id := m.ID
		if _, err := o.docs.ReadAt(rec[:], int64(id-1)*ownRecSize); err != nil {
			return nil, fmt.Errorf("read search index %s: %w", o.dir, err)
		}
		no := binary.LittleEndian.Uint32(rec[0:])
		path := o.byNo[no]
		r := o.st.Files[path]
		if r == nil || no != uint32(m.Ref) || crc32.Checksum(rec[:24], crcTable) != binary.LittleEndian.Uint32(rec[24:]) {
			return nil, fmt.Errorf("read search index %s: document %d: %w", o.dir, id, textindex.ErrCorrupt)
		}
		se := sessions[r.Session]
		if se == nil {
			s := o.st.Sessions[r.Session]
			se = &Session{Path: r.Session}
			if s != nil {
				se.ID, se.Name, se.Cwd, se.Format = s.ID, s.Name, s.Cwd, s.Format
			}
			sessions[r.Session] = se
		}
		c := candidate{sess: se, file: path, fkind: r.Kind, off: int64(binary.LittleEndian.Uint64(rec[8:])),
			n: int64(binary.LittleEndian.Uint64(rec[16:])), part: int(binary.LittleEndian.Uint32(rec[4:])),
			kind: Kind(m.Role), tool: m.Tool, ts: m.Time, entryFromFile: true}
		out = append(out, c)
	}
	return out, nil
}

// eval returns the documents that match e and pass filter, by id.
func (o *own) eval(ctx context.Context, e *ftsExpr, filter func(textindex.Meta) bool) (map[uint64]textindex.Meta, error) {
	switch e.op {
	case opLeaf:
		hits, err := o.ix.Search(ctx, textindex.Query{Clauses: e.clauses, Filter: filter})
		if err != nil {
			return nil, err
		}
		m := make(map[uint64]textindex.Meta, len(hits))
		for _, h := range hits {
			m[h.ID] = h.Meta
		}
		return m, nil
	case opAnd, opOr, opNot:
		acc, err := o.eval(ctx, e.kids[0], filter)
		if err != nil {
			return nil, err
		}
		for _, k := range e.kids[1:] {
			if e.op == opAnd && len(acc) == 0 {
				break
			}
			m, err := o.eval(ctx, k, filter)
			if err != nil {
				return nil, err
			}
			switch e.op {
			case opAnd:
				for id := range acc {
					if _, ok := m[id]; !ok {
						delete(acc, id)
					}
				}
			case opOr:
				for id, v := range m {
					acc[id] = v
				}
			case opNot:
				for id := range m {
					delete(acc, id)
				}
			}
		}
		return acc, nil
	}
	return nil, fmt.Errorf("search: bad query expression")
}

// ownCheck verifies every page of the own index and empties it when a
// check fails; it returns 1 then (the next search builds it again).
func (x *Index) ownCheck(ctx context.Context) (int, error) {
	_ = x.waitOwnMerge() // it failed safely; the check looks at what it left
	if err := x.fsys().MkdirAll(x.dir, vfs.DirMode); err != nil {
		return 0, fmt.Errorf("open search index %s: %w", x.dir, err)
	}
	lk, err := lockShared(ctx, x.fsys(), x.dir)
	if err != nil {
		return 0, err
	}
	defer lk.release()
	if err := lk.exclusive(ctx); err != nil {
		return 0, err
	}
	ix, err := textindex.Open(x.fsys(), filepath.Join(x.ownDir(), ownTextDir))
	if err == nil {
		err = ix.Verify(ctx)
		ix.Close()
	}
	if err == nil {
		_, err = readOwnState(x.fsys(), filepath.Join(x.ownDir(), ownStateName))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		return 0, nil
	}
	if !errors.Is(err, textindex.ErrCorrupt) {
		return 0, &indexError{err}
	}
	if err := x.fsys().RemoveAll(x.ownDir()); err != nil {
		return 0, &indexError{err}
	}
	return 1, nil
}
