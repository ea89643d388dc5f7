package engine

import (
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/tree"
)

// The offset index caches, for a large session file, where each of its
// lines is and what its envelope holds (what the validating parse finds),
// so that a read-only open of a file that was opened before reads it
// without parsing it again. One index file per session file, under the
// user cache directory (offsetIndexPath); nothing is written next to the
// session, whose directory belongs to the agent. It is never the source
// of truth:
//
//   - it is used only while the file's size, modification time
//     (nanoseconds) and inode are what they were when it was made, its
//     first and last indexed lines still have their checksums, and every
//     indexed line is still a '{' ... '}' span of the bytes just read;
//   - a file that only grew (same inode, its old last line unchanged at
//     its offset, a line starting where the old file ended) reuses the
//     indexed prefix and parses only what was appended;
//   - files with malformed lines or without a final newline, and files
//     modified in the last two seconds, are not indexed; an index that is
//     missing, damaged (checksum), foreign (another path) or stale is
//     ignored and the file is parsed in full, as without the index.

// offsetIndexPath returns the offset index file of the session file at
// path under cacheDir (layout.CacheDir): <cacheDir>/offset-index/<the
// first 32 hex digits of the SHA-256 of the file's absolute path>.
func offsetIndexPath(cacheDir, path string) string {
	return cacheindex.Path(cacheDir, "offset-index", path)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// offsetIndexMin is the file size from which a read-only open keeps an
// offset index: below it the parse costs less than reading the index.
const offsetIndexMin = 4 << 20

// offsetIndexMagic starts every offset index file (its format version).
const offsetIndexMagic = "sessctl offset index 2\n"

// offsetIndex is a decoded offset index file.
type offsetIndex struct {
	path      string
	size      int64
	mtimeNs   int64
	ino       uint64
	headCRC   uint32 // checksum of the first indexed line
	lastCRC   uint32 // checksum of the last indexed line
	lines     int
	envelopes [][]byte // the jsonl envelope record, in parts (DecodeEnvelopeParts)
	parents   []byte   // the entries' tree.ParentPositions (appendParents)
}

// envelopeParts is the number of parts of the envelope record, decoded
// concurrently, of an index of at least envelopePartMin entries a part.
const (
	envelopeParts   = 4
	envelopePartMin = 64
)

func lineCRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// encodeOffsetIndex encodes the index of the file at path, stat st, parsed
// as p (clean: no malformed line, a final newline, at least one entry).
// parents gives p's tree.ParentPositions; it is called once the
// envelopes are encoded, so that a caller can find them meanwhile.
func encodeOffsetIndex(path string, st fs.FileInfo, p *jsonl.Parsed, parents func() []int32) []byte {
	buf := make([]byte, 0, 64+len(path)+len(p.Entries)*72)
	buf = append(buf, offsetIndexMagic...)
	buf = binary.AppendUvarint(buf, uint64(len(path)))
	buf = append(buf, path...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(p.Size))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(st.ModTime().UnixNano()))
	buf = binary.LittleEndian.AppendUint64(buf, vfs.FileID(st))
	buf = binary.LittleEndian.AppendUint32(buf, lineCRC(p.Entries[0].Raw))
	buf = binary.LittleEndian.AppendUint32(buf, lineCRC(p.Entries[len(p.Entries)-1].Raw))
	buf = binary.AppendUvarint(buf, uint64(p.Lines))
	parts := max(1, min(envelopeParts, len(p.Entries)/envelopePartMin))
	buf = binary.AppendUvarint(buf, uint64(parts))
	// The parts are encoded on every CPU, as they are decoded.
	encoded := make([][]byte, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := len(p.Entries)*i/parts, len(p.Entries)*(i+1)/parts
		wg.Go(func() { encoded[i] = jsonl.AppendEnvelopes(make([]byte, 0, (hi-lo)*72), p.Entries[lo:hi]) })
	}
	wg.Wait()
	for _, b := range encoded {
		buf = appendSized(buf, b)
	}
	ps := parents()
	buf = appendSized(buf, appendParents(make([]byte, 0, len(ps)+16), ps))
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// appendSized appends b to dst after its length (a uvarint).
func appendSized(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendParents appends the parent positions of the entries (-1 for
// none), each as the distance back to it: a varint, one byte for the
// usual entry whose parent is the line before.
func appendParents(dst []byte, parents []int32) []byte {
	for i, p := range parents {
		dst = binary.AppendVarint(dst, int64(i)-int64(p))
	}
	return dst
}

// decodeParents decodes the parent positions of n entries that
// appendParents wrote; ok is false unless rec holds exactly n positions,
// each -1 or an entry's.
func decodeParents(rec []byte, n int) (parents []int32, ok bool) {
	if len(rec) < n {
		return nil, false // at least a byte each
	}
	parents = make([]int32, n)
	for i := range parents {
		d, k := binary.Varint(rec)
		if k <= 0 {
			return nil, false
		}
		rec = rec[k:]
		p := int64(i) - d
		if p < -1 || p >= int64(n) {
			return nil, false
		}
		parents[i] = int32(p)
	}
	return parents, len(rec) == 0
}

// decodeOffsetIndex decodes an index file; ok is false for a damaged or
// foreign one.
func decodeOffsetIndex(b []byte, path string) (ix offsetIndex, ok bool) {
	if len(b) < len(offsetIndexMagic)+4 || string(b[:len(offsetIndexMagic)]) != offsetIndexMagic {
		return ix, false
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return ix, false
	}
	r := body[len(offsetIndexMagic):]
	n, k := binary.Uvarint(r)
	if k <= 0 || n > uint64(len(r)-k) {
		return ix, false
	}
	ix.path = string(r[k : k+int(n)])
	r = r[k+int(n):]
	if ix.path != path || len(r) < 32 {
		return ix, false
	}
	ix.size = int64(binary.LittleEndian.Uint64(r))
	ix.mtimeNs = int64(binary.LittleEndian.Uint64(r[8:]))
	ix.ino = binary.LittleEndian.Uint64(r[16:])
	ix.headCRC = binary.LittleEndian.Uint32(r[24:])
	ix.lastCRC = binary.LittleEndian.Uint32(r[28:])
	r = r[32:]
	lines, k := binary.Uvarint(r)
	if k <= 0 || ix.size <= 0 || lines > uint64(ix.size) {
		return ix, false
	}
	ix.lines = int(lines)
	r = r[k:]
	parts, k := binary.Uvarint(r)
	if k <= 0 || parts == 0 || parts > uint64(len(r)) {
		return ix, false
	}
	r = r[k:]
	sized := func() ([]byte, bool) {
		n, k := binary.Uvarint(r)
		if k <= 0 || n > uint64(len(r)-k) {
			return nil, false
		}
		b := r[k : k+int(n)]
		r = r[k+int(n):]
		return b, true
	}
	ix.envelopes = make([][]byte, parts)
	for i := range ix.envelopes {
		if ix.envelopes[i], ok = sized(); !ok {
			return ix, false
		}
	}
	if ix.parents, ok = sized(); !ok || len(r) != 0 {
		return ix, false
	}
	return ix, true
}

// sameStat reports whether two stats of a path describe the same file
// with the same size and modification time.
func sameStat(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && vfs.FileID(a) == vfs.FileID(b) && vfs.SameFile(a, b)
}

// readIndexed reads the file of a read-only session and parses it, with
// the help of its offset index when one fits (see the comment at the top
// of this file). It returns the bytes, the file's stat (nil when it could
// not be taken), the parse, and keep, which writes the index when it
// must be made again (nil when not): called once the session has indexed
// the parse, it takes the entries' parent positions from the session's
// index instead of a second map of ids.
func (s *Session) readIndexed() (data []byte, st fs.FileInfo, p *jsonl.Parsed, keep func(), err error) {
	fsys := s.opts.fs()
	before, _ := fsys.Stat(s.file)
	data, err = vfs.ReadFile(fsys, s.file)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ixPath := offsetIndexFile(s.opts, s.file, before)
	if ixPath == "" {
		return data, before, jsonl.ParseFile(data), nil, nil
	}
	after, err := fsys.Stat(s.file)
	if err != nil || !sameStat(before, after) || int64(len(data)) != after.Size() {
		// Changed while it was read: no index is trusted or made.
		return data, after, jsonl.ParseFile(data), nil, nil
	}
	p, use := s.parseWithIndex(fsys, ixPath, data, after)
	if s.opts.testIndexHook != nil {
		s.opts.testIndexHook(use)
	}
	if use != indexExact {
		keep = func() {
			keepOffsetIndex(fsys, s.opts, ixPath, s.file, after, p, func() []int32 {
				if parents, ok := s.ix.ParentPositions(p.Entries); ok {
					return parents
				}
				// The session indexed other entries (a version 1 or 2
				// file, migrated in memory) or none.
				return tree.ParentPositions(p.Entries)
			})
		}
	}
	return data, after, p, keep, nil
}

// offsetIndexFile returns the offset index file that a read-only open of
// the session file at abs (stat st) may use and keep, or "" when none
// may.
func offsetIndexFile(opts options, abs string, st fs.FileInfo) string {
	minSize := int64(offsetIndexMin)
	if opts.testIndexMin > 0 {
		minSize = opts.testIndexMin
	}
	// Without a file identity (Windows' stat has no inode) a file
	// replaced by another of the same size and time could pass for the
	// indexed one: no index is used there.
	if opts.NoOffsetIndex || st == nil || !st.Mode().IsRegular() || st.Size() < minSize || vfs.FileID(st) == 0 {
		return ""
	}
	cache := cacheindex.ResolveDir(opts.CacheDir)
	if cache == "" {
		return ""
	}
	ixPath := offsetIndexPath(cache, abs)
	if dir := filepath.Dir(abs); ixPath == abs || strings.HasPrefix(ixPath, dir+string(filepath.Separator)) {
		// A cache directory inside the session's own directory: the
		// agent's store is never written to.
		return ""
	}
	return ixPath
}

// keepOffsetIndex writes the index of the file at abs (stat st), parsed
// as p, whose entries' parent positions parents gives, to ixPath when the
// parse may be indexed and the file is not too recent. It is best
// effort, without fsync: a damaged index is ignored.
func keepOffsetIndex(fsys vfs.FS, opts options, ixPath, abs string, st fs.FileInfo, p *jsonl.Parsed, parents func() []int32) {
	writeOffsetIndex(fsys, ixPath, offsetIndexOf(opts, abs, st, p, parents))
}

// offsetIndexOf returns the offset index keepOffsetIndex writes, or nil
// when the parse may not be indexed or the file is too recent.
func offsetIndexOf(opts options, abs string, st fs.FileInfo, p *jsonl.Parsed, parents func() []int32) []byte {
	if !cleanParse(p) || !cacheindex.Cacheable(st.ModTime(), opts.now()) {
		return nil
	}
	return encodeOffsetIndex(cacheindex.AbsDir(abs), st, p, parents)
}

// writeOffsetIndex writes the encoded index b (none when nil) to ixPath,
// as keepOffsetIndex does.
func writeOffsetIndex(fsys vfs.FS, ixPath string, b []byte) {
	if b == nil {
		return
	}
	if err := fsys.MkdirAll(filepath.Dir(ixPath), vfs.DirMode); err == nil {
		_ = vfs.WriteFileAtomicNoSync(fsys, ixPath, b, vfs.FileMode)
	}
}

// cleanParse reports whether a parse may be indexed: entries, no
// malformed line, and a final newline.
func cleanParse(p *jsonl.Parsed) bool {
	return len(p.Entries) > 0 && len(p.Malformed) == 0 && p.Tail == jsonl.TailClean
}

// indexUse says how an open used the offset index.
type indexUse int

const (
	indexUnused indexUse = iota // parsed in full
	indexExact                  // the index described the file
	indexPrefix                 // the index described a prefix; the rest was parsed
)

// parseWithIndex parses data, the file's bytes (stat st), using the index
// at ixPath where it fits, and says how it used it.
func (s *Session) parseWithIndex(fsys vfs.FS, ixPath string, data []byte, st fs.FileInfo) (*jsonl.Parsed, indexUse) {
	b, err := fsys.ReadFile(ixPath)
	if err != nil {
		return jsonl.ParseFile(data), indexUnused
	}
	ix, ok := decodeOffsetIndex(b, cacheindex.AbsDir(s.file))
	size := int64(len(data))
	if !ok || ix.ino != vfs.FileID(st) || ix.size > size || data[ix.size-1] != '\n' {
		return jsonl.ParseFile(data), indexUnused
	}
	same := ix.size == size && ix.mtimeNs == st.ModTime().UnixNano()
	if !same && (ix.size == size || data[ix.size] != '{') {
		// Rewritten in place, or grown by something other than lines of
		// objects: parse it all.
		return jsonl.ParseFile(data), indexUnused
	}
	entries, err := jsonl.DecodeEnvelopeParts(data[:ix.size], ix.envelopes)
	if err != nil || len(entries) == 0 ||
		lineCRC(entries[0].Raw) != ix.headCRC || lineCRC(entries[len(entries)-1].Raw) != ix.lastCRC {
		return jsonl.ParseFile(data), indexUnused
	}
	if same {
		return &jsonl.Parsed{Entries: entries, Lines: ix.lines, Tail: jsonl.TailClean, Size: size}, indexExact
	}
	// The file grew: parse what was appended.
	tail := jsonl.ParseFile(data[ix.size:])
	for i := range tail.Entries {
		tail.Entries[i].Offset += ix.size
		tail.Entries[i].Line += ix.lines
	}
	for i := range tail.Malformed {
		tail.Malformed[i].Offset += ix.size
		tail.Malformed[i].Line += ix.lines
	}
	p := &jsonl.Parsed{
		Entries:   append(entries, tail.Entries...),
		Malformed: tail.Malformed,
		Lines:     ix.lines + tail.Lines,
		Tail:      tail.Tail,
		Size:      size,
	}
	if tail.Tail != jsonl.TailClean {
		p.TailOffset = tail.TailOffset + ix.size
	}
	return p, indexPrefix
}
