package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// FileContext is the model context of a session file, as ReadContext
// reads it.
type FileContext struct {
	File    string             // the file's absolute path
	Header  Header             // the file's header
	Context compaction.Context // the context at the leaf asked for
}

// ReadContext returns the model context of the session file at path, as
// a read-only OpenFile followed by Context (or ContextAt the entry leaf,
// when leaf is not empty) would, while holding far less in memory: the file
// is parsed in pieces, message entries are kept without their bytes, and
// only the lines the context holds are read back, each checked to be the
// line that was parsed. A leaf that names no entry is an error wrapping
// ErrNotFound.
//
// A session file of 4 MiB or more gets the offset index a read-only open
// keeps (see StoreOptions.NoOffsetIndex), and ReadContext uses and keeps it
// too: with an index that matches the file's size, modification time
// and identity and the checksums of its first and last lines, the file
// is not parsed at all, and only the entries that are not messages and
// the context's lines are read.
//
// When the file changes while it is read (pi appends without a lock), it
// is read again; a file that needs migrating, is not a regular file or
// does not parse as a session (ReadContext then returns the error
// OpenFile would) is read whole, by a read-only open. A path that does
// not exist is ErrNotFound. o is used as for a read-only OpenFile
// (ReadOnly is implied). ReadContext never writes the session file, only
// the offset index in the cache directory. Like OpenFile, it works with
// the default StoreOptions (the real filesystem, the user's cache
// directory).
func ReadContext(ctx context.Context, path, leaf string, o OpenOptions) (*FileContext, error) {
	o.ReadOnly = true
	return readContext(ctx, path, leaf, (&Store{}).openOptions(o))
}

// readContext is ReadContext with the session options opts.
func readContext(ctx context.Context, path, leaf string, opts options) (*FileContext, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read context of %s: %w", path, err)
	}
	for range 2 {
		fc, err := readContextLean(opts, abs, leaf)
		if errors.Is(err, errWholeFile) {
			break
		}
		if !errors.Is(err, errReadAgain) {
			return fc, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	opts.ReadOnly = true
	s, err := open(ctx, abs, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	fc := &FileContext{File: s.SessionFile(), Header: s.Header()}
	if leaf == "" {
		fc.Context = s.Context()
		return fc, nil
	}
	if _, ok := s.Entry(leaf); !ok {
		return nil, fmt.Errorf("entry %s: %w", leaf, ErrNotFound)
	}
	fc.Context = s.ContextAt(compaction.LeafID(leaf))
	return fc, nil
}

// errWholeFile says that readContextLean cannot answer for the file, and
// Open must read it; errReadAgain that the file changed while it was
// read.
var (
	errWholeFile = errors.New("read the whole file")
	errReadAgain = errors.New("the file changed while it was read")
)

// readContextLean is ReadContext's reading in pieces. It returns
// errWholeFile for every file it does not answer for, and errReadAgain
// when the file changed while it was read.
func readContextLean(opts options, abs, leaf string) (*FileContext, error) {
	fsys := opts.fs()
	f, err := fsys.OpenFile(abs, os.O_RDONLY, 0)
	if err != nil {
		return nil, errWholeFile
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil || !before.Mode().IsRegular() {
		return nil, errWholeFile
	}
	ixPath := offsetIndexFile(opts, abs, before)
	var p *jsonl.Parsed
	var parents []int32 // the index's tree.ParentPositions of p.Entries
	indexed := false
	if ixPath != "" {
		p, parents = detachedFromIndex(fsys, f, ixPath, abs, before)
		indexed = p != nil
		if opts.testIndexHook != nil {
			use := indexUnused
			if indexed {
				use = indexExact
			}
			opts.testIndexHook(use)
		}
	}
	if p == nil {
		p, err = jsonl.ParseReader(f, 0, func(e *jsonl.Entry) bool { return e.Type != jsonl.TypeMessage })
		if err != nil || len(p.Entries) == 0 || checkHeader(abs, p) != nil ||
			migrate.Needed(migrate.VersionOf(&p.Entries[0])) {
			return nil, errWholeFile
		}
	}
	// The branch is walked by the entries' parent positions, without a
	// map of ids (tree.BranchAt). Those of a file parsed here are found
	// while its offset index is encoded beside (both only read the
	// entries; an index is kept only of a file that did not change while
	// it was parsed), and the index is written while the context's lines
	// are read back.
	var written sync.WaitGroup
	defer written.Wait()
	if parents == nil {
		var found, encoded sync.WaitGroup
		found.Add(1)
		if ixPath != "" {
			mid, err := f.Stat()
			// (The index needs the last line's checksum.)
			if err == nil && sameStat(before, mid) && p.Size == mid.Size() && readBack(f, &p.Entries[len(p.Entries)-1]) == nil {
				encoded.Add(1)
				written.Go(func() {
					b := offsetIndexOf(opts, abs, mid, p, func() []int32 { found.Wait(); return parents })
					encoded.Done()
					writeOffsetIndex(fsys, ixPath, b)
				})
			}
		}
		parents = tree.ParentPositions(p.Entries)
		found.Done()
		encoded.Wait()
	}
	c, err := contextByPosition(f, p, parents, leaf)
	if errors.Is(err, errNoPositions) {
		// The index's positions do not fit its entries.
		c, err = contextByPosition(f, p, tree.ParentPositions(p.Entries), leaf)
	}
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil {
		return nil, errWholeFile
	}
	if !sameStat(before, after) || p.Size != after.Size() {
		return nil, errReadAgain
	}
	return &FileContext{File: abs, Header: jsonl.ParseHeader(p.Entries[0]), Context: c}, nil
}

// errNoPositions says that contextByPosition cannot walk the branch: no
// parent positions, or positions that do not fit the entries.
var errNoPositions = errors.New("no parent positions")

// contextByPosition builds the context at leaf ("": the last entry) of
// the file f parsed as p, as compaction.BuildLoad over tree.Build would,
// without a map of ids: parents are the entries' tree.ParentPositions
// (from the offset index, or found after the parse), the branch is
// walked by position
// (tree.BranchAt, which checks each step) and the leaf asked for looked
// for entry by entry. The context's lines are read back (readBackAll).
// It returns errNoPositions when parents is nil or does not fit, an
// error wrapping ErrNotFound for a leaf that names no entry, and
// errReadAgain when a line read back is not the one parsed.
func contextByPosition(f vfs.File, p *jsonl.Parsed, parents []int32, leaf string) (compaction.Context, error) {
	if parents == nil {
		return compaction.Context{}, errNoPositions
	}
	start := -1
	if leaf != "" {
		if start = tree.LastWithKey(p.Entries, leaf); start < 0 {
			return compaction.Context{}, fmt.Errorf("entry %s: %w", leaf, ErrNotFound)
		}
	} else {
		// The leaf is the last entry (headers aside), whatever its id.
		for i := len(p.Entries) - 1; i > 0 && start < 0; i-- {
			if !p.Entries[i].IsHeader() {
				start = i
			}
		}
	}
	var path []*jsonl.Entry
	if start >= 0 {
		var ok bool
		if path, ok = tree.BranchAt(p.Entries, parents, start); !ok {
			return compaction.Context{}, errNoPositions
		}
	}
	c, err := compaction.FromPathLoad(path, func(es []*jsonl.Entry) error { return readBackAll(f, es) })
	if err != nil {
		return c, errReadAgain // changed, or cut short, since it was parsed
	}
	return c, nil
}

// readBack gives a detached entry its bytes, read from f and checked to
// be the line it was parsed from (jsonl.Entry.Fill).
func readBack(f vfs.File, e *jsonl.Entry) error {
	if !e.Detached() {
		return nil
	}
	off, n := e.Span()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	return e.Fill(b)
}

// Read-back runs: the lines of a context are read in runs of nearby
// lines, one read each, rather than one read per line.
const (
	readBackGap = 64 << 10 // at most this many unneeded bytes between two lines of a run
	readBackRun = 2 << 20  // a run ends after this many bytes (more runs, for more CPUs)
)

// readBackAll is readBack for the entries es, in runs of nearby lines,
// each read at once (see readBackGap) and checked on every CPU. It
// returns the first error found.
func readBackAll(f vfs.File, es []*jsonl.Entry) error {
	byOffset := slices.Clone(es)
	slices.SortFunc(byOffset, func(a, b *jsonl.Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	var runs [][]*jsonl.Entry
	for i := 0; i < len(byOffset); {
		start, _ := byOffset[i].Span()
		j := i + 1
		for ; j < len(byOffset); j++ {
			prevOff, prevLen := byOffset[j-1].Span()
			off, n := byOffset[j].Span()
			if off-(prevOff+int64(prevLen)) > readBackGap || off+int64(n)-start > readBackRun {
				break
			}
		}
		runs = append(runs, byOffset[i:j])
		i = j
	}
	var (
		next atomic.Int64
		errs = make([]error, len(runs))
		wg   sync.WaitGroup
	)
	work := func() {
		for k := int(next.Add(1)) - 1; k < len(runs); k = int(next.Add(1)) - 1 {
			errs[k] = readRun(f, runs[k])
		}
	}
	for range min(runtime.GOMAXPROCS(0), len(runs)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return errors.Join(errs...)
}

// readRun gives the detached entries run (in file order, each after the
// one before) their bytes, from one read of the span that holds them.
func readRun(f vfs.File, run []*jsonl.Entry) error {
	first, _ := run[0].Span()
	lastOff, lastLen := run[len(run)-1].Span()
	buf := make([]byte, lastOff+int64(lastLen)-first)
	if _, err := f.ReadAt(buf, first); err != nil {
		return err
	}
	for _, e := range run {
		off, n := e.Span()
		if err := e.Fill(buf[off-first : off-first+int64(n) : off-first+int64(n)]); err != nil {
			return err
		}
	}
	return nil
}

// detachedFromIndex returns the entries of the file f (at abs, stat st)
// from its offset index at ixPath, detached, except the entries that are
// not messages and the first and last (read back, and checked against
// the index's checksums); nil when there is no index, or it does not
// describe the file exactly. The index is trusted for the lines it does
// not read back while the file's size, modification time and identity
// are the indexed ones; each line read later is checked again. It
// returns the entries' parent positions (tree.ParentPositions) too.
func detachedFromIndex(fsys vfs.FS, f vfs.File, ixPath, abs string, st fs.FileInfo) (*jsonl.Parsed, []int32) {
	b, err := fsys.ReadFile(ixPath)
	if err != nil {
		return nil, nil
	}
	ix, ok := decodeOffsetIndex(b, cacheindex.AbsDir(abs))
	if !ok || ix.ino != vfs.FileID(st) || ix.size != st.Size() || ix.mtimeNs != st.ModTime().UnixNano() {
		return nil, nil
	}
	entries, err := jsonl.DecodeDetachedParts(ix.size, ix.envelopes)
	if err != nil || len(entries) == 0 {
		return nil, nil
	}
	parents, ok := decodeParents(ix.parents, len(entries))
	if !ok {
		return nil, nil
	}
	last := len(entries) - 1
	var back []*jsonl.Entry
	for i := range entries {
		if e := &entries[i]; i == 0 || i == last || e.Type != jsonl.TypeMessage {
			back = append(back, e)
		}
	}
	if readBackAll(f, back) != nil {
		return nil, nil
	}
	if lineCRC(entries[0].Raw) != ix.headCRC || lineCRC(entries[last].Raw) != ix.lastCRC {
		return nil, nil
	}
	p := &jsonl.Parsed{Entries: entries, Lines: ix.lines, Tail: jsonl.TailClean, Size: ix.size}
	if checkHeader(abs, p) != nil || migrate.Needed(migrate.VersionOf(&p.Entries[0])) {
		return nil, nil
	}
	return p, parents
}
