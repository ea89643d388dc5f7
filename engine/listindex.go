package engine

import (
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
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
	return cacheindex.Path(cacheDir, "list-index", dir)
}

// indexHeader is the first line of dir's index: the format version and
// the directory, so that an index is never taken for another directory's.
func indexHeader(dir string) []byte { return cacheindex.Header("sessctlListIndex", 6, dir) }

// textHeader is the first line of dir's text index (<index>.text).
func textHeader(dir string) []byte { return cacheindex.Header("sessctlListText", 1, dir) }

// listTextPath returns the text index of the session directory dir.
func listTextPath(cacheDir, dir string) string { return listIndexPath(cacheDir, dir) + ".text" }

// stamp is what a cached entry is valid for (see cacheindex.Stamp).
type stamp = cacheindex.Stamp

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
	return cacheindex.ReadLines(fsys, listIndexPath(cacheDir, dir), indexHeader(dir), func(line []byte) (string, indexEntry, bool) {
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
	return cacheindex.ReadLines(fsys, listTextPath(cacheDir, dir), textHeader(dir), decodeTextLine)
}

// decodeTextLine reads {"name","size","mtimeNs","crc","text"}: text is the
// file's allMessagesText as a JSON string, the last member, taken by
// position and checked by its CRC-32C. A damaged line is skipped.
func decodeTextLine(line []byte) (string, textEntry, bool) {
	name, st, text, ok := cacheindex.DecodeLine(line, "text")
	if !ok || jsonl.KindOf(text) != jsonl.KindString {
		return "", textEntry{}, false
	}
	return name, textEntry{st, text}, true
}

// decodeIndexLine reads {"name","size","mtimeNs","crc"?,"info"?}: info is
// the listing fields as pi's list() writes them (without the path), and
// crc its CRC-32C, so a damaged line is noticed without validating the
// JSON (the lines are read with jsonl.MembersTrusted). A damaged line is
// skipped.
func decodeIndexLine(dir string, line []byte) (string, indexEntry, bool) {
	var ent indexEntry
	name, st, infoRaw, ok := cacheindex.DecodeLine(line, "info")
	if !ok {
		return "", ent, false
	}
	ent.stamp = st
	if infoRaw != nil {
		info, ok := decodeInfo(infoRaw)
		if !ok {
			return "", ent, false
		}
		info.Path = filepath.Join(dir, name)
		info.Size = ent.Size
		info.ModTime = time.Unix(0, ent.MtimeNs)
		info.stamp = ent.stamp
		ent.info = info
	}
	return name, ent, true
}

// encodeIndexLine writes one index line, newline included: the info
// without its texts (headJSON).
func encodeIndexLine(dst []byte, name string, ent indexEntry) []byte {
	var info []byte
	if ent.info != nil {
		if info = ent.info.cachedHead(); info == nil {
			info = headJSON(ent.info)
		}
	}
	return cacheindex.AppendLine(dst, name, ent.stamp, "info", info)
}

// encodeTextLine writes one text index line, newline included.
func encodeTextLine(dst []byte, name string, ent textEntry) []byte {
	return cacheindex.AppendLine(dst, name, ent.stamp, "text", ent.text)
}

// decodeInfo reads the fields headJSON wrote, keeping its bytes for
// Info.AppendJSON.
func decodeInfo(raw []byte) (*Info, bool) {
	in := &Info{}
	hasModified := false
	err := jsonl.MembersTrusted(raw, func(key, v []byte) bool {
		switch string(key) {
		case "id":
			in.idJSON, in.ID = v, idText(v)
		case "cwd":
			in.Cwd, _ = jsonl.String(v)
		case "name":
			in.Name, in.HasName = jsonl.String(v)
		case "parentSessionPath":
			in.parentJSON, in.ParentSessionPath = v, parentText(v)
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
	if err != nil || !hasModified || in.idJSON == nil {
		return nil, false
	}
	in.cache = &infoCache{head: raw, snap: *in}
	return in, true
}

// writeIndex replaces dir's index with entries. It is best effort: a cache
// that cannot be written (read-only store) is simply not kept. It does not
// fsync: a damaged index after a crash is ignored and rebuilt.
func writeIndex(fsys vfs.FS, cacheDir, dir string, entries map[string]indexEntry, names []string) {
	if cacheDir == "" {
		return
	}
	buf := make([]byte, 0, 1<<16+len(entries)*768) // about a line per entry
	buf = append(buf, indexHeader(dir)...)
	buf = append(buf, '\n')
	for _, n := range names {
		if ent, ok := entries[n]; ok {
			buf = encodeIndexLine(buf, n, ent)
		}
	}
	cacheindex.Replace(fsys, listIndexPath(cacheDir, dir), buf)
}

// writeTexts replaces dir's text index with texts, as writeIndex.
func writeTexts(fsys vfs.FS, cacheDir, dir string, texts map[string]textEntry, names []string) {
	if cacheDir == "" {
		return
	}
	n := 0
	for name, t := range texts {
		// The key members (name, size, times, inode, checksum) take up
		// to about 160 bytes besides the name: room for all, so that
		// the buffer of tens of megabytes is never copied to grow.
		n += len(t.text) + len(name) + 192
	}
	buf := make([]byte, 0, n+len(dir)+64)
	buf = append(buf, textHeader(dir)...)
	buf = append(buf, '\n')
	for _, name := range names {
		if t, ok := texts[name]; ok {
			buf = encodeTextLine(buf, name, t)
		}
	}
	cacheindex.Replace(fsys, listTextPath(cacheDir, dir), buf)
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
	cache := cacheindex.ResolveDir(s.opts.CacheDir)
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
	cacheindex.Append(fsys, path, encodeIndexLine(nil, name, indexEntry{cacheindex.StampOf(st), info}))
	cacheindex.Append(fsys, listTextPath(cache, dir), encodeTextLine(nil, name, textEntry{cacheindex.StampOf(st), allTextJSON(info)}))
}
