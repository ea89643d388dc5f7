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
//   - an entry is used only while the file's size and modification time
//     (nanoseconds) are what they were when it was made, and files modified
//     in the last two seconds are never cached, so a change within the
//     filesystem's timestamp granularity cannot go unnoticed;
//   - the index is JSON lines, later lines for a name replacing earlier
//     ones: a writer that closes a session appends its fresh entry, and
//     listing rewrites the index when it found stale or missing entries;
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
	return jsonl.NewObject(64+len(dir)).Number("sessctlListIndex", 4).String("dir", absDir(dir)).Bytes()
}

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

// indexEntry is one cached file.
type indexEntry struct {
	size    int64
	mtimeNs int64
	info    *Info // nil: the file is not a session
}

// readIndex loads dir's index; a missing or unusable index gives an empty
// map.
func readIndex(fsys vfs.FS, cacheDir, dir string) map[string]indexEntry {
	out := map[string]indexEntry{}
	if cacheDir == "" {
		return out
	}
	data, err := vfs.ReadFile(fsys, listIndexPath(cacheDir, dir))
	if err != nil {
		return out
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.Equal(data[:nl], indexHeader(dir)) {
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
		ent  indexEntry
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
				if name, ent, ok := decodeIndexLine(dir, line); ok {
					results[i] = append(results[i], kv{name, ent})
				}
			}
		})
	}
	wg.Wait()
	for _, r := range results {
		for _, x := range r {
			out[x.name] = x.ent
		}
	}
	return out
}

// decodeIndexLine reads {"name","size","mtimeNs","crc"?,"info"?}: info is
// the listing fields as pi's list() writes them (without the path), and
// crc its CRC-32C, so a damaged line is noticed without validating the
// JSON (the lines are read with jsonl.MembersTrusted). A damaged line is
// skipped.
func decodeIndexLine(dir string, line []byte) (string, indexEntry, bool) {
	var name, crc string
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
	hasName, hasSize, hasMtime := false, false, false
	err := jsonl.MembersTrusted(head, func(key, v []byte) bool {
		switch string(key) {
		case "name":
			name, hasName = jsonl.String(v)
		case "size":
			f, ok := jsonl.Number(v)
			ent.size, hasSize = int64(f), ok
		case "mtimeNs":
			// Nanoseconds exceed a double's precision: kept as a string.
			n, err := strconv.ParseInt(strings.Trim(string(v), `"`), 10, 64)
			ent.mtimeNs, hasMtime = n, err == nil
		case "crc":
			crc, _ = jsonl.String(v)
		}
		return true
	})
	if err != nil || !hasName || !hasSize || !hasMtime || layout.CheckName(name) != nil {
		return "", ent, false
	}
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
		ent.info = info
	}
	return name, ent, true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crcHex(b []byte) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], crc32.Checksum(b, castagnoli))
	return hex.EncodeToString(out[:])
}

// encodeIndexLine writes one index line, newline included.
func encodeIndexLine(dst []byte, name string, ent indexEntry) []byte {
	b := jsonl.NewObject(256).String("name", name).Number("size", float64(ent.size)).
		String("mtimeNs", itoa(ent.mtimeNs))
	if ent.info != nil {
		info := ent.info.cachedJSON()
		if info == nil {
			info = infoJSON(ent.info)
		}
		b.String("crc", crcHex(info)).Raw("info", info)
	}
	dst = append(dst, b.Bytes()...)
	return append(dst, '\n')
}

// decodeInfo reads the fields infoJSON wrote, keeping its bytes for
// Info.AppendJSON. allMessagesText, the last member, is taken by position and
// left encoded (see Info.AllMessagesText).
func decodeInfo(raw []byte) (*Info, bool) {
	in := &Info{}
	hasModified := false
	head := raw
	const textKey = `,"allMessagesText":`
	if k := bytes.Index(raw, []byte(textKey)); k >= 0 && raw[len(raw)-1] == '}' {
		in.allTextJSON = raw[k+len(textKey) : len(raw)-1]
		head = raw[:k]
	}
	err := jsonl.MembersTrusted(head, func(key, v []byte) bool {
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
	in.cache = &infoCache{json: raw, snap: *in}
	return in, true
}

// withCache stores in's list-index encoding (infoJSON) in it and makes its
// allMessagesText share that encoding, so the text is held once, and
// Info.AppendJSON and the index copy the encoding as it is.
func withCache(in *Info) {
	j := infoJSON(in)
	n := len(allTextJSON(in))
	in.allTextJSON = j[len(j)-1-n : len(j)-1 : len(j)-1]
	in.cache = &infoCache{json: j, snap: *in}
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
	path := listIndexPath(cacheDir, dir)
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
func appendIndex(fsys vfs.FS, path, name string, ent indexEntry) {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
	if err != nil {
		return
	}
	_, _ = f.Write(encodeIndexLine(nil, name, ent))
	_ = f.Close()
}

// refreshIndex appends this session's listing entry to its directory's
// list index, when the directory has one, so that the next listing need
// not read the file: the writer knows exactly what it wrote. The lock is
// held, so the file cannot have changed since.
func (s *Session) refreshIndex() {
	if !s.persist || !s.onDisk || s.file == "" {
		return
	}
	cache := resolveCache(s.opts.CacheDir)
	if cache == "" {
		return
	}
	fsys := s.opts.fs()
	path := listIndexPath(cache, filepath.Dir(s.file))
	if _, err := fsys.Lstat(path); err != nil {
		return
	}
	st, err := fsys.Stat(s.file)
	if err != nil {
		return
	}
	var b infoBuilder
	b.start(s.file, st.ModTime(), st.Size())
	b.add(&s.header, &jsonl.MessageMembers{})
	for _, e := range s.ix.Entries() {
		m := e.MessageMembers()
		b.add(e, &m)
	}
	info, err := b.finish()
	if err != nil {
		return
	}
	appendIndex(fsys, path, filepath.Base(s.file), indexEntry{size: st.Size(), mtimeNs: st.ModTime().UnixNano(), info: info})
}
