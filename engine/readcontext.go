package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
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
// a read-only Open followed by Context (or ContextAt the entry leaf, when
// leaf is not empty) would, while holding far less in memory: the file
// is parsed in pieces, message entries are kept without their bytes, and
// only the lines the context holds are read back, each checked to be the
// line that was parsed. A leaf that names no entry is an error wrapping
// ErrNotFound.
//
// A session file of 4 MiB or more gets the offset index a read-only Open
// keeps (see Options.NoOffsetIndex), and ReadContext uses and keeps it
// too: with an index that matches the file's size, modification time
// and identity and the checksums of its first and last lines, the file
// is not parsed at all, and only the entries that are not messages and
// the context's lines are read.
//
// When the file changes while it is read (pi appends without a lock), it
// is read again; a file that needs migrating, is not a regular file or
// does not parse as a session (ReadContext then returns the error Open
// would) is read whole, by Open. Of opts, FS, CacheDir and
// NoOffsetIndex apply (and Cwd, for a file that does not exist: Open's
// fresh session); ReadContext never writes the session file, only the
// offset index in the cache directory.
func ReadContext(ctx context.Context, path, leaf string, opts Options) (*FileContext, error) {
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
	s, err := Open(ctx, abs, opts)
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
func readContextLean(opts Options, abs, leaf string) (*FileContext, error) {
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
	indexed := false
	if ixPath != "" {
		p = detachedFromIndex(fsys, f, ixPath, abs, before)
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
	ix := tree.Build(p.Entries[1:]) // later header lines are skipped, as in pi
	target := compaction.Leaf{}
	if leaf != "" {
		if !ix.Has(leaf) {
			return nil, fmt.Errorf("entry %s: %w", leaf, ErrNotFound)
		}
		target = compaction.LeafID(leaf)
	} else {
		target.ID, target.Kind = ix.Leaf()
	}
	c, err := compaction.BuildLoad(ix, target, func(e *jsonl.Entry) error { return readBack(f, e) })
	if err != nil {
		return nil, errReadAgain // changed, or cut short, since it was parsed
	}
	after, err := f.Stat()
	if err != nil {
		return nil, errWholeFile
	}
	if !sameStat(before, after) || p.Size != after.Size() {
		return nil, errReadAgain
	}
	if ixPath != "" && !indexed && readBack(f, &p.Entries[len(p.Entries)-1]) == nil {
		// The index needs the last line's checksum.
		keepOffsetIndex(fsys, opts, ixPath, abs, after, p)
	}
	return &FileContext{File: abs, Header: jsonl.ParseHeader(p.Entries[0]), Context: c}, nil
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

// detachedFromIndex returns the entries of the file f (at abs, stat st)
// from its offset index at ixPath, detached, except the entries that are
// not messages and the first and last (read back, and checked against
// the index's checksums); nil when there is no index, or it does not
// describe the file exactly. The index is trusted for the lines it does
// not read back while the file's size, modification time and identity
// are the indexed ones; each line read later is checked again.
func detachedFromIndex(fsys vfs.FS, f vfs.File, ixPath, abs string, st fs.FileInfo) *jsonl.Parsed {
	b, err := fsys.ReadFile(ixPath)
	if err != nil {
		return nil
	}
	ix, ok := decodeOffsetIndex(b, absDir(abs))
	if !ok || ix.ino != vfs.FileID(st) || ix.size != st.Size() || ix.mtimeNs != st.ModTime().UnixNano() {
		return nil
	}
	entries, rest, err := jsonl.DecodeDetached(ix.size, ix.envelopes)
	if err != nil || len(rest) != 0 || len(entries) == 0 {
		return nil
	}
	last := len(entries) - 1
	for i := range entries {
		if e := &entries[i]; i == 0 || i == last || e.Type != jsonl.TypeMessage {
			if readBack(f, e) != nil {
				return nil
			}
		}
	}
	if lineCRC(entries[0].Raw) != ix.headCRC || lineCRC(entries[last].Raw) != ix.lastCRC {
		return nil
	}
	p := &jsonl.Parsed{Entries: entries, Lines: ix.lines, Tail: jsonl.TailClean, Size: ix.size}
	if checkHeader(abs, p) != nil || migrate.Needed(migrate.VersionOf(&p.Entries[0])) {
		return nil
	}
	return p
}
