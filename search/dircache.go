package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/sessctl/sessctl/layout/vfs"
)

// A search in a new process lists every directory of the stores to find
// their session files: at 50,000 sessions in 40 directories, 50 ms of a
// 0.16 s search. A directory's listing changes only with its entries, and
// an entry made, removed or renamed changes the directory's modification
// and change times. So the own engine keeps the listings (ownDirsName,
// beside its state) and a later search that finds a directory's
// identity and times as they were takes its listing from there, without
// reading the directory. The files listed are stat'ed all the same: an
// append changes a file, not its directory.
//
// Times are only as fine as the filesystem's clock: an entry made within
// the same tick as the change a listing saw would leave the times as
// they were. So a listing is kept only once confirmed: a listing begun
// dirSettle or more after the first that saw those times had ended gave
// the same entries and times. The change came before the first listing
// ended, so whatever came within its tick came before the confirming
// listing (ticks are shorter than dirSettle: FAT's 2 s are the longest),
// and whatever comes after it comes a tick or more after the change and
// changes the times. The two listings are timed by one machine's clock
// (the file names the host), so a filesystem whose clock is off (a
// network one's server) changes nothing; a clock set forward by more than
// dirSettle between them could.
//
// Listings are kept only of directories on filesystems known to set a
// directory's times at every change of its entries (keepsListings: on
// Linux, the local ones); on others (FUSE, 9p, network filesystems, whose
// clients may answer a stat and a listing from their own caches) and on
// other systems every directory is read.

// ownDirsName is the file of the listings, in the own engine's directory.
const ownDirsName = "dirs"

// dirSettle is how long after a first listing a second one must be begun
// to confirm it: longer than any filesystem's time tick. Tests lower it.
var dirSettle = 3 * time.Second

// ownDirsMagic begins the file of the listings; a CRC-32C of the rest
// follows it, then the host name of the machine whose clock timed them.
const ownDirsMagic = "sessctl-dirs\x00\x02"

// dirCacheMax bounds the file of the listings read: a larger one is not
// sessctl's, and is listed again.
const dirCacheMax = 256 << 20

// dirCache is an FS whose ReadDir gives a directory's kept listing when
// the directory is as the listing found it (dirCache's comment above),
// and otherwise lists it and keeps what it found.
type dirCache struct {
	vfs.FS
	path string // the file of the listings
	host string // this machine's name: listings timed by another's are not used
	now  func() time.Time
	keep func(dir string) bool // keepsListings

	mu    sync.Mutex
	dirs  map[string]*cachedDir
	seen  map[string]bool // the directories listed through c
	dirty bool            // dirs differs from the file
}

// cachedDir is a directory's listing and the directory's stat before it.
type cachedDir struct {
	id           uint64
	mtime, ctime int64
	first        int64 // when the first listing of these times ended, Unix ns
	settled      bool  // confirmed: given without a listing
	names        []string
	types        []fs.FileMode // fs.FileMode type bits, by name
}

// openDirCache returns a dirCache over fsys with the listings kept at
// path; a file that is missing, damaged or of another version is
// started afresh.
func openDirCache(fsys vfs.FS, path string) *dirCache {
	host, _ := os.Hostname()
	c := &dirCache{FS: fsys, path: path, host: host, now: time.Now, keep: keepsListings, dirs: map[string]*cachedDir{}, seen: map[string]bool{}}
	if fi, err := fsys.Stat(path); err != nil || fi.Size() > dirCacheMax {
		return c
	}
	b, err := fsys.ReadFile(path)
	if err != nil {
		return c
	}
	if h, dirs, ok := decodeDirCache(b); ok && h == host {
		c.dirs = dirs
	}
	return c
}

// ReadDir returns name's listing: the one kept when it is confirmed and
// the directory's identity and times are as they were, else a listing
// taken now.
func (c *dirCache) ReadDir(name string) ([]fs.DirEntry, error) {
	begun := c.now().UnixNano()
	fi, err := c.FS.Stat(name)
	if err != nil || !fi.IsDir() || !c.keep(name) {
		return c.FS.ReadDir(name)
	}
	a := vfs.AttrOf(fi)
	c.mu.Lock()
	c.seen[name] = true
	d := c.dirs[name] // replaced, never changed, but for settled
	same := d != nil && a.Ctime != 0 && d.id == a.ID && d.mtime == a.Mtime && d.ctime == a.Ctime
	settled := same && d.settled
	c.mu.Unlock()
	if settled {
		return d.entries(c.FS, name), nil
	}
	ents, err := c.FS.ReadDir(name)
	ended := c.now().UnixNano()
	if err != nil || a.Ctime == 0 {
		// (No change time to compare: nothing is kept.)
		return ents, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case same && c.dirs[name] == d && d.sameEntries(ents):
		if begun-d.first >= int64(dirSettle) {
			d.settled = true
			c.dirty = true
		}
	default:
		nd := &cachedDir{id: a.ID, mtime: a.Mtime, ctime: a.Ctime, first: ended}
		nd.names = make([]string, len(ents))
		nd.types = make([]fs.FileMode, len(ents))
		for i, e := range ents {
			nd.names[i], nd.types[i] = e.Name(), e.Type()
		}
		c.dirs[name] = nd
		c.dirty = true
	}
	return ents, nil
}

// confirm lists again the directories listed through c whose listings
// are not yet confirmed and were taken dirSettle or more ago (by a
// search as long as a first build): ReadDir confirms them when they are
// as they were, and keeps a new listing when they are not.
func (c *dirCache) confirm() {
	now := c.now().UnixNano()
	c.mu.Lock()
	var again []string
	for name := range c.seen {
		if d := c.dirs[name]; d != nil && !d.settled && now-d.first >= int64(dirSettle) {
			again = append(again, name)
		}
	}
	c.mu.Unlock()
	for _, name := range again {
		_, _ = c.ReadDir(name) // (a directory gone or unreadable is listed again next time)
	}
}

// files is how many entries that are not directories the kept listings
// hold: about as many files as a walk through c finds.
func (c *dirCache) files() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.dirs {
		for _, t := range d.types {
			if !t.IsDir() {
				n++
			}
		}
	}
	return n
}

// save writes the listings when they changed, without a sync: a file
// torn by a crash fails its checksum, and is started afresh. A save that
// fails is passed over: the listings are only a cache. The listings of
// directories that were not listed through c and are gone are left out
// (those of stores other searches search are kept).
func (c *dirCache) save() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return
	}
	for p := range c.dirs {
		if c.seen[p] {
			continue
		}
		if _, err := c.FS.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			delete(c.dirs, p)
		}
	}
	if vfs.WriteFileAtomicNoSync(c.FS, c.path, encodeDirCache(c.host, c.dirs), vfs.FileMode) == nil {
		c.dirty = false
	}
}

func (d *cachedDir) sameEntries(ents []fs.DirEntry) bool {
	if len(ents) != len(d.names) {
		return false
	}
	for i, e := range ents {
		if e.Name() != d.names[i] || e.Type() != d.types[i] {
			return false
		}
	}
	return true
}

// entries returns d's listing of the directory dir as a new slice.
func (d *cachedDir) entries(fsys vfs.FS, dir string) []fs.DirEntry {
	l := &cachedListing{fsys: fsys, dir: dir, d: d}
	ents := make([]cachedEntry, len(d.names))
	out := make([]fs.DirEntry, len(d.names))
	for i := range ents {
		ents[i] = cachedEntry{l: l, i: i}
		out[i] = &ents[i]
	}
	return out
}

// cachedListing is a kept listing given for the directory dir.
type cachedListing struct {
	fsys vfs.FS
	dir  string
	d    *cachedDir
}

// cachedEntry is a kept listing's entry: the i-th (small, as a store's
// 50,000 are made at every search).
type cachedEntry struct {
	l *cachedListing
	i int
}

func (e *cachedEntry) Name() string      { return e.l.d.names[e.i] }
func (e *cachedEntry) IsDir() bool       { return e.Type().IsDir() }
func (e *cachedEntry) Type() fs.FileMode { return e.l.d.types[e.i] }

// Info stats the entry now, as an os.DirEntry's does.
func (e *cachedEntry) Info() (fs.FileInfo, error) {
	return e.l.fsys.Lstat(filepath.Join(e.l.dir, e.Name()))
}

// encodeDirCache encodes the listings: ownDirsMagic, a CRC-32C of what
// follows, the host, the count of directories, and for each, in path
// order, its path, identity, times, settled flag and entries (name and
// type).
func encodeDirCache(host string, dirs map[string]*cachedDir) []byte {
	b := append([]byte(ownDirsMagic), 0, 0, 0, 0)
	b = appendDirString(b, host)
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for _, p := range slices.Sorted(maps.Keys(dirs)) {
		d := dirs[p]
		b = appendDirString(b, p)
		b = binary.AppendUvarint(b, d.id)
		b = binary.AppendVarint(b, d.mtime)
		b = binary.AppendVarint(b, d.ctime)
		b = binary.AppendVarint(b, d.first)
		settled := byte(0)
		if d.settled {
			settled = 1
		}
		b = append(b, settled)
		b = binary.AppendUvarint(b, uint64(len(d.names)))
		for i, n := range d.names {
			b = appendDirString(b, n)
			b = binary.AppendUvarint(b, uint64(d.types[i]))
		}
	}
	at := len(ownDirsMagic)
	binary.LittleEndian.PutUint32(b[at:], crc32.Checksum(b[at+4:], crcTable))
	return b
}

func appendDirString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeDirCache decodes encodeDirCache's bytes; false when they are not
// whole. The strings share b's memory: b is never changed after.
func decodeDirCache(b []byte) (string, map[string]*cachedDir, bool) {
	at := len(ownDirsMagic)
	if len(b) < at+4 || !bytes.Equal(b[:at], []byte(ownDirsMagic)) ||
		binary.LittleEndian.Uint32(b[at:]) != crc32.Checksum(b[at+4:], crcTable) {
		return "", nil, false
	}
	// The names share b's memory, which nothing changes after.
	r := dirReader{b: b[at+4:], s: unsafe.String(unsafe.SliceData(b[at+4:]), len(b)-at-4)}
	host := r.str()
	n := r.count(1)
	dirs := make(map[string]*cachedDir, n)
	for range n {
		p := r.str()
		d := &cachedDir{id: r.uvarint(), mtime: r.varint(), ctime: r.varint(), first: r.varint()}
		d.settled = r.byte() == 1
		k := r.count(2)
		d.names = make([]string, k)
		d.types = make([]fs.FileMode, k)
		for i := range k {
			d.names[i] = r.str()
			d.types[i] = fs.FileMode(r.uvarint()) & fs.ModeType
		}
		if r.err != nil {
			return "", nil, false
		}
		dirs[p] = d
	}
	return host, dirs, r.err == nil && len(r.b) == 0
}

// dirReader reads encodeDirCache's fields from b, the strings from s (b
// as one string: 50,000 names are not 50,000 strings); the first error
// sticks.
type dirReader struct {
	b   []byte
	s   string
	err error
}

var errDirCache = errors.New("damaged listings")

func (r *dirReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errDirCache, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *dirReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errDirCache, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *dirReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errDirCache
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// count reads a count of items of at least least bytes each, no more
// than the bytes left allow.
func (r *dirReader) count(least int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/least) || v > math.MaxInt32 {
		r.err, r.b = errDirCache, nil
		return 0
	}
	return int(v)
}

func (r *dirReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errDirCache, nil
		return ""
	}
	at := len(r.s) - len(r.b)
	r.b = r.b[n:]
	return r.s[at : at+int(n)]
}
