// Package cacheindex is the machinery the per-directory caches under the
// user cache directory share (engine's list index, engine/stats's stats
// index): where a directory's index file lives, the stamp an entry is
// valid for, the rule that recent files are never cached, reading an
// index of JSON lines (later lines for a name win), and replacing or
// appending to one. Every file operation goes through layout/vfs; a cache
// is best effort and never the source of truth, so nothing here returns
// an error.
package cacheindex

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

// Path returns the index file of the directory (or file) dir under
// cacheDir (layout.CacheDir): <cacheDir>/<kind>/<the first 32 hex digits
// of the SHA-256 of dir's absolute path>.
func Path(cacheDir, kind, dir string) string {
	sum := sha256.Sum256([]byte(AbsDir(dir)))
	return filepath.Join(cacheDir, kind, hex.EncodeToString(sum[:16]))
}

// AbsDir returns dir made absolute, or dir when that fails.
func AbsDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// Header returns the first line of dir's index, without its newline: the
// format's name and version and the directory, so that an index is never
// taken for another directory's or another format's.
func Header(format string, version int, dir string) []byte {
	return jsonl.NewObject(64+len(dir)).Number(format, float64(version)).String("dir", AbsDir(dir)).Bytes()
}

// ResolveDir returns the cache directory to use: dir, or
// layout.CacheDir(), or "" (no index) when there is none.
func ResolveDir(dir string) string {
	if dir != "" {
		return dir
	}
	d, err := layout.CacheDir()
	if err != nil {
		return ""
	}
	return d
}

// RacyWindow is how recent a modification time must be for a file not to
// be cached: a change within the filesystem's timestamp granularity
// could otherwise go unnoticed.
const RacyWindow = 2 * time.Second

// Cacheable reports whether a file modified at mtime may be cached at
// now: it was modified more than RacyWindow ago.
func Cacheable(mtime time.Time, now time.Time) bool {
	return now.Sub(mtime) > RacyWindow
}

// Stamp is what a cached entry is valid for: the file's size,
// modification time, identity (inode) and inode change time, as a stat
// gives them (identity and change time are 0 where the platform has
// none). Any write, a replacement (even of the same size and time), a
// rename onto the path or a metadata change gives another stamp.
type Stamp struct {
	Size    int64
	MtimeNs int64
	Ino     uint64
	CtimeNs int64
}

// StampOf returns the stamp of a stat.
func StampOf(fi fs.FileInfo) Stamp {
	return Stamp{fi.Size(), fi.ModTime().UnixNano(), vfs.FileID(fi), vfs.ChangeTime(fi)}
}

// ReadLines reads the index file at path whose first line is header,
// decoding the lines after it with decode (later lines for a name win;
// lines decode rejects are skipped). A missing index, or one whose first
// line is another, gives an empty map. Large files are decoded in two
// halves on separate CPUs.
func ReadLines[E any](fsys vfs.FS, path string, header []byte, decode func([]byte) (string, E, bool)) map[string]E {
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

// AppendLine appends an index line and its newline: {"name","size",
// "mtimeNs","ino","ctimeNs"} (nanoseconds and inodes as strings: they
// exceed a double's precision), then, when payload is not nil, "crc" (its
// CRC-32C, so that a damaged line is noticed without validating it) and
// payload as the last member, named member.
func AppendLine(dst []byte, name string, st Stamp, member string, payload []byte) []byte {
	// Built in dst itself: an index of texts is tens of megabytes.
	var b jsonl.ObjectBuilder
	appendKey(b.StartIn(dst), name, st)
	if payload != nil {
		b.String("crc", crcHex(payload)).Raw(member, payload)
	}
	return append(b.Bytes(), '\n')
}

// DecodeLine reads a line AppendLine wrote with member: the name, the
// stamp and the payload (nil when the line has none). The payload, the
// largest part by far, is cut off by position (an unescaped `,"member":`
// cannot occur inside a JSON string) and checked by its checksum instead
// of being walked; the members before it are read with
// jsonl.MembersTrusted. ok is false for a damaged line: a checksum that
// does not match, a name, size or time missing, a name that is not a
// session file's.
func DecodeLine(line []byte, member string) (name string, st Stamp, payload []byte, ok bool) {
	head := line
	key := `,"` + member + `":`
	if k := bytes.Index(line, []byte(key)); k >= 0 && line[len(line)-1] == '}' {
		payload = line[k+len(key) : len(line)-1]
		head = line[:k]
	}
	name, st, crc, ok := decodeKey(head)
	if !ok || (payload != nil && crc != crcHex(payload)) {
		return "", Stamp{}, nil, false
	}
	return name, st, payload, true
}

// DecodeKey reads the members before an index line's payload (for a
// reader that cuts the payload off itself): the name, the stamp and the
// payload's checksum as the line states it (CRCHex); ok as for
// DecodeLine.
func DecodeKey(head []byte) (name string, st Stamp, crc string, ok bool) { return decodeKey(head) }

// decodeKey reads the members before an index line's payload: name,
// size, mtimeNs, ino, ctimeNs and crc.
func decodeKey(head []byte) (name string, st Stamp, crc string, ok bool) {
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
			st.Size, hasSize = int64(f), ok
		case "mtimeNs":
			st.MtimeNs, hasMtime = integer(v)
		case "ino":
			n, err := strconv.ParseUint(strings.Trim(string(v), `"`), 10, 64)
			if err == nil {
				st.Ino = n
			}
		case "ctimeNs":
			st.CtimeNs, _ = integer(v)
		case "crc":
			crc, _ = jsonl.String(v)
		}
		return true
	})
	ok = err == nil && hasName && hasSize && hasMtime && layout.CheckName(name) == nil
	return
}

// appendKey writes the members every index line starts with (but crc):
// name, size, mtimeNs, ino and ctimeNs.
func appendKey(b *jsonl.ObjectBuilder, name string, st Stamp) *jsonl.ObjectBuilder {
	return b.String("name", name).Number("size", float64(st.Size)).String("mtimeNs", strconv.FormatInt(st.MtimeNs, 10)).
		String("ino", strconv.FormatUint(st.Ino, 10)).String("ctimeNs", strconv.FormatInt(st.CtimeNs, 10))
}

// CRC is the table of an index line's checksum of its payload (CRC-32C),
// for a reader that checks a payload it streams (CRCHex words the sum).
var CRC = crc32.MakeTable(crc32.Castagnoli)

// crcHex returns the CRC-32C of b in hex: an index line's checksum of its
// payload.
func crcHex(b []byte) string { return CRCHex(crc32.Checksum(b, CRC)) }

// CRCHex words a checksum as an index line carries it.
func CRCHex(sum uint32) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], sum)
	return hex.EncodeToString(out[:])
}

// Replace writes buf to path through a temporary file and a rename,
// never through a symbolic link, making path's directory (0700) and the
// file (0600) as needed; best effort, without fsync: a damaged index
// after a crash is ignored and rebuilt.
func Replace(fsys vfs.FS, path string, buf []byte) {
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

// Append adds line to the index at path when it exists (never through a
// symbolic link): the way a writer keeps a cache current. Best effort.
func Append(fsys vfs.FS, path string, line []byte) {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
	if err != nil {
		return
	}
	_, _ = f.Write(line)
	_ = f.Close()
}
