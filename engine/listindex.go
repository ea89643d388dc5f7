package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io/fs"
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

// The list index caches each session file's Info, one index file
// per listed directory under the user cache directory (listIndexPath), so
// that listing thousands of sessions reads one file instead of all of
// them. Nothing is written into the session directory, which belongs to
// pi. It is never the source of truth:
//
//   - an entry is used only while the file's size, modification time
//     (nanoseconds), identity (inode) and inode change time are what they
//     were when it was made (stamp), and files modified in the last two
//     seconds are never cached, so a change within the filesystem's
//     timestamp granularity cannot go unnoticed (where a stat has no
//     inode or change time, on Windows, a file rewritten in place with
//     its size and modification time put back is not noticed);
//   - the index is JSON lines, later lines for a name replacing earlier
//     ones: a writer that closes a session appends its fresh entry, and
//     listing rewrites the index when it found stale or missing entries;
//   - the messages' texts (allMessagesText, most of a listing's bytes)
//     are kept apart, in <index>.text, under the same rules: a listing
//     that does not show them (ListOptions.NoText, sessctl's table)
//     reads and writes only the rest, and one that does keeps them
//     (Store.ListTexts finds each line in one pass, then reads the texts
//     one at a time by their offsets);
//   - a missing, damaged or foreign index (one whose first line names
//     another directory) is ignored and rebuilt; deleting it is always
//     safe, and a cache directory that cannot be made means no index. It
//     holds message text, so it is created 0600 in a 0700 directory.

// listIndexPath returns the list index file of the session directory dir
// under cacheDir (layout.CacheDir): <cacheDir>/list-index/<the first 32
// hex digits of the SHA-256 of dir's absolute path>.
func listIndexPath(cacheDir, dir string) string {
	sum := sha256.Sum256([]byte(absDir(dir)))
	return filepath.Join(cacheDir, "list-index", hex.EncodeToString(sum[:16]))
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// indexHeader is the first line of dir's index: the format version and
// the directory, so that an index is never taken for another directory's.
func indexHeader(dir string) []byte {
	return jsonl.NewObject(64+len(dir)).Number("sessctlListIndex", 6).String("dir", absDir(dir)).Bytes()
}

// textHeader is the first line of dir's text index (<index>.text).
func textHeader(dir string) []byte {
	return jsonl.NewObject(64+len(dir)).Number("sessctlListText", 1).String("dir", absDir(dir)).Bytes()
}

// listTextPath returns the text index of the session directory dir.
func listTextPath(cacheDir, dir string) string { return listIndexPath(cacheDir, dir) + ".text" }

// resolveCache returns the cache directory to use: dir, or
// layout.CacheDir(), or "" (no index) when there is none.
func resolveCache(dir string) string {
	if dir != "" {
		return dir
	}
	d, err := layout.CacheDir()
	if err != nil {
		return ""
	}
	return d
}

// racyWindow is how recent a modification time must be for a file not to
// be cached (see the package comment on the list index).
const racyWindow = 2 * time.Second

// stamp is what a cached entry is valid for: the file's size,
// modification time, identity (inode and device) and inode change time,
// as a stat gives them (identity and change time are 0 where the platform
// has none). Any write, a replacement (even of the same size and time),
// a rename onto the path or a metadata change gives another stamp.
type stamp struct {
	size    int64
	mtimeNs int64
	ino     uint64
	ctimeNs int64
}

// stampOf returns the stamp of a stat.
func stampOf(fi fs.FileInfo) stamp {
	return stamp{fi.Size(), fi.ModTime().UnixNano(), vfs.FileID(fi), vfs.ChangeTime(fi)}
}

// indexEntry is one cached file.
type indexEntry struct {
	stamp
	info *Info // nil: the file is not a session
}

// readIndex loads dir's index; a missing or unusable index gives an empty
// map.
func readIndex(fsys vfs.FS, cacheDir, dir string) map[string]indexEntry {
	if cacheDir == "" {
		return map[string]indexEntry{}
	}
	return readLines(fsys, listIndexPath(cacheDir, dir), indexHeader(dir), func(line []byte) (string, indexEntry, bool) {
		return decodeIndexLine(dir, line)
	})
}

// textEntry is the text of one cached file: its allMessagesText as a JSON
// string, for the size and modification time it was read at.
type textEntry struct {
	stamp
	text []byte
}

// readTexts loads dir's text index; a missing or unusable one gives an
// empty map.
func readTexts(fsys vfs.FS, cacheDir, dir string) map[string]textEntry {
	if cacheDir == "" {
		return map[string]textEntry{}
	}
	return readLines(fsys, listTextPath(cacheDir, dir), textHeader(dir), decodeTextLine)
}

// readLines reads an index file whose first line is header, decoding the
// lines after it with decode (later lines for a name win). Large files are
// decoded in two halves on separate CPUs.
func readLines[E any](fsys vfs.FS, path string, header []byte, decode func([]byte) (string, E, bool)) map[string]E {
	out := map[string]E{}
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return out
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.Equal(data[:nl], header) {
		return out
	}
	body := data[nl+1:]
	// Decode the halves of a large index on separate CPUs; later lines
	// win, so the second half is applied last.
	parts := [][]byte{body}
	if len(body) > 1<<20 {
		cut := len(body) / 2
		if k := bytes.IndexByte(body[cut:], '\n'); k >= 0 {
			parts = [][]byte{body[:cut+k+1], body[cut+k+1:]}
		}
	}
	type kv struct {
		name string
		ent  E
	}
	results := make([][]kv, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() {
			for len(part) > 0 {
				line := part
				if k := bytes.IndexByte(part, '\n'); k >= 0 {
					line, part = part[:k], part[k+1:]
				} else {
					part = nil
				}
				if len(line) == 0 {
					continue
				}
				if name, ent, ok := decode(line); ok {
					results[i] = append(results[i], kv{name, ent})
				}
			}
		})
	}
	wg.Wait()
	out = make(map[string]E, len(results[0])+len(results[len(results)-1]))
	for _, r := range results {
		for _, x := range r {
			out[x.name] = x.ent
		}
	}
	return out
}

// decodeTextLine reads {"name","size","mtimeNs","crc","text"}: text is the
// file's allMessagesText as a JSON string, the last member, taken by
// position and checked by its CRC-32C. A damaged line is skipped.
func decodeTextLine(line []byte) (string, textEntry, bool) {
	var ent textEntry
	const key = `,"text":`
	k := bytes.Index(line, []byte(key))
	if k < 0 || line[len(line)-1] != '}' {
		return "", ent, false
	}
	ent.text = line[k+len(key) : len(line)-1]
	name, st, crc, ok := decodeKey(line[:k])
	if !ok || crc != crcHex(ent.text) || jsonl.KindOf(ent.text) != jsonl.KindString {
		return "", ent, false
	}
	ent.stamp = st
	return name, ent, true
}

// decodeKey reads the members every index line starts with: name, size,
// mtimeNs, ino, ctimeNs and crc.
func decodeKey(head []byte) (name string, st stamp, crc string, ok bool) {
	hasName, hasSize, hasMtime := false, false, false
	// Nanoseconds and inodes exceed a double's precision: kept as strings.
	integer := func(v []byte) (int64, bool) {
		n, err := strconv.ParseInt(strings.Trim(string(v), `"`), 10, 64)
		return n, err == nil
	}
	err := jsonl.MembersTrusted(head, func(key, v []byte) bool {
		switch string(key) {
		case "name":
			name, hasName = jsonl.String(v)
		case "size":
			f, ok := jsonl.Number(v)
			st.size, hasSize = int64(f), ok
		case "mtimeNs":
			st.mtimeNs, hasMtime = integer(v)
		case "ino":
			n, err := strconv.ParseUint(strings.Trim(string(v), `"`), 10, 64)
			if err == nil {
				st.ino = n
			}
		case "ctimeNs":
			st.ctimeNs, _ = integer(v)
		case "crc":
			crc, _ = jsonl.String(v)
		}
		return true
	})
	ok = err == nil && hasName && hasSize && hasMtime && layout.CheckName(name) == nil
	return
}

// appendKey writes the members every index line starts with (but crc).
func appendKey(b *jsonl.ObjectBuilder, name string, st stamp) *jsonl.ObjectBuilder {
	return b.String("name", name).Number("size", float64(st.size)).String("mtimeNs", itoa(st.mtimeNs)).
		String("ino", strconv.FormatUint(st.ino, 10)).String("ctimeNs", itoa(st.ctimeNs))
}

// decodeIndexLine reads {"name","size","mtimeNs","crc"?,"info"?}: info is
// the listing fields as pi's list() writes them (without the path), and
// crc its CRC-32C, so a damaged line is noticed without validating the
// JSON (the lines are read with jsonl.MembersTrusted). A damaged line is
// skipped.
func decodeIndexLine(dir string, line []byte) (string, indexEntry, bool) {
	var ent indexEntry
	// The info object is the last member and the largest by far: it is cut
	// off by position (an unescaped `,"info":` cannot occur inside a JSON
	// string) and checked by its checksum instead of being walked.
	var infoRaw []byte
	head := line
	if k := bytes.Index(line, []byte(`,"info":`)); k >= 0 && len(line) > 0 && line[len(line)-1] == '}' {
		infoRaw = line[k+len(`,"info":`) : len(line)-1]
		head = line[:k]
	}
	name, st, crc, ok := decodeKey(head)
	if !ok {
		return "", ent, false
	}
	ent.stamp = st
	if infoRaw != nil {
		if crc != crcHex(infoRaw) {
			return "", ent, false
		}
		info, ok := decodeInfo(infoRaw)
		if !ok {
			return "", ent, false
		}
		info.Path = filepath.Join(dir, name)
		info.Size = ent.size
		info.ModTime = time.Unix(0, ent.mtimeNs)
		info.stamp = ent.stamp
		ent.info = info
	}
	return name, ent, true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crcHex(b []byte) string { return crcHexOf(crc32.Checksum(b, castagnoli)) }

// crcHexOf is a CRC-32C as the index lines write it.
func crcHexOf(crc uint32) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], crc)
	return hex.EncodeToString(out[:])
}

// encodeIndexLine writes one index line, newline included: the info
// without its texts (headJSON).
func encodeIndexLine(dst []byte, name string, ent indexEntry) []byte {
	b := appendKey(jsonl.NewObject(256), name, ent.stamp)
	if ent.info != nil {
		info := ent.info.cachedHead()
		if info == nil {
			info = headJSON(ent.info)
		}
		b.String("crc", crcHex(info)).Raw("info", info)
	}
	dst = append(dst, b.Bytes()...)
	return append(dst, '\n')
}

// encodeTextLine writes one text index line, newline included.
func encodeTextLine(dst []byte, name string, ent textEntry) []byte {
	b := appendKey(jsonl.NewObject(128+len(ent.text)), name, ent.stamp).String("crc", crcHex(ent.text)).Raw("text", ent.text)
	dst = append(dst, b.Bytes()...)
	return append(dst, '\n')
}

// decodeInfo reads the fields headJSON wrote, keeping its bytes for
// Info.AppendJSON.
func decodeInfo(raw []byte) (*Info, bool) {
	in := &Info{}
	hasModified := false
	err := jsonl.MembersTrusted(raw, func(key, v []byte) bool {
		switch string(key) {
		case "id":
			in.ID = v
		case "cwd":
			in.Cwd, _ = jsonl.String(v)
		case "name":
			in.Name, in.HasName = jsonl.String(v)
		case "parentSessionPath":
			in.ParentSessionPath = v
		case "created":
			if s, ok := jsonl.String(v); ok {
				if ms, ok := jsonl.ParseDate(s); ok {
					in.Created, in.CreatedValid = time.UnixMilli(int64(ms)).UTC(), true
				}
			}
		case "modified":
			if s, ok := jsonl.String(v); ok {
				if ms, ok := jsonl.ParseDate(s); ok {
					in.Modified, hasModified = time.UnixMilli(int64(ms)).UTC(), true
				}
			}
		case "messageCount":
			f, _ := jsonl.Number(v)
			in.MessageCount = int(f)
		case "firstMessage":
			in.FirstMessage, _ = jsonl.String(v)
			in.firstJSON = v
		}
		return true
	})
	if err != nil || !hasModified || in.ID == nil {
		return nil, false
	}
	in.cache = &infoCache{head: raw, snap: *in}
	return in, true
}

// cacheable reports whether a file's stat is old enough to be cached.
func cacheable(mtime time.Time, now time.Time) bool {
	return now.Sub(mtime) > racyWindow
}

// writeIndex replaces dir's index with entries. It is best effort: a cache
// that cannot be written (read-only store) is simply not kept. It does not
// fsync: a damaged index after a crash is ignored and rebuilt.
func writeIndex(fsys vfs.FS, cacheDir, dir string, entries map[string]indexEntry, names []string) {
	if cacheDir == "" {
		return
	}
	buf := make([]byte, 0, 1<<16)
	buf = append(buf, indexHeader(dir)...)
	buf = append(buf, '\n')
	for _, n := range names {
		if ent, ok := entries[n]; ok {
			buf = encodeIndexLine(buf, n, ent)
		}
	}
	replaceCacheFile(fsys, listIndexPath(cacheDir, dir), buf)
}

// writeTexts replaces dir's text index with texts, as writeIndex.
func writeTexts(fsys vfs.FS, cacheDir, dir string, texts map[string]textEntry, names []string) {
	if cacheDir == "" {
		return
	}
	n := 0
	for _, t := range texts {
		n += len(t.text) + 96
	}
	buf := make([]byte, 0, n+len(dir)+64)
	buf = append(buf, textHeader(dir)...)
	buf = append(buf, '\n')
	for _, name := range names {
		if t, ok := texts[name]; ok {
			buf = encodeTextLine(buf, name, t)
		}
	}
	replaceCacheFile(fsys, listTextPath(cacheDir, dir), buf)
}

// replaceCacheFile writes buf to path through a temporary file and a
// rename, never through a symbolic link; best effort, without fsync.
func replaceCacheFile(fsys vfs.FS, path string, buf []byte) {
	if err := fsys.MkdirAll(filepath.Dir(path), vfs.DirMode); err != nil {
		return
	}
	tmp := vfs.TempName(path)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if st, lerr := fsys.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			err = vfs.ErrSymlink
		}
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
	}
}

// appendIndex adds a fresh entry for one file to the index at path, when
// it exists: the way a writer keeps the cache current. Best effort.
func appendIndex(fsys vfs.FS, path string, line []byte) {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
	if err != nil {
		return
	}
	_, _ = f.Write(line)
	_ = f.Close()
}

// refreshIndex appends this session's listing entry to its directory's
// list index, and its texts to the text index, when the directory has
// them, so that the next listing need not read the file: the writer knows
// exactly what it wrote. The lock is held, so the file cannot have
// changed since.
func (s *Session) refreshIndex() {
	if !s.persist || !s.onDisk || s.file == "" {
		return
	}
	cache := resolveCache(s.opts.CacheDir)
	if cache == "" {
		return
	}
	fsys := s.opts.fs()
	dir := filepath.Dir(s.file)
	path := listIndexPath(cache, dir)
	if _, err := fsys.Lstat(path); err != nil {
		return
	}
	st, err := fsys.Stat(s.file)
	if err != nil {
		return
	}
	var b infoBuilder
	b.start(s.file, st.ModTime(), st.Size(), false)
	b.add(&s.header, &jsonl.MessageMembers{})
	for _, e := range s.ix.Entries() {
		m := e.MessageMembers()
		b.add(e, &m)
	}
	info, err := b.finish()
	if err != nil {
		return
	}
	name := filepath.Base(s.file)
	appendIndex(fsys, path, encodeIndexLine(nil, name, indexEntry{stampOf(st), info}))
	appendIndex(fsys, listTextPath(cache, dir), encodeTextLine(nil, name, textEntry{stampOf(st), allTextJSON(info)}))
}
