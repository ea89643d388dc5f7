package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Info is a listed row: what listing reports about one session file,
// pi's SessionInfo, field for field. (An open session is a Session.)
type Info struct {
	Path string
	// ID is the header's id: a string in every valid file. An id of
	// another JSON type (which pi passes through to its listing) is its
	// JSON text, and "" when it is null or missing; the JSON encodings
	// (AppendJSON, MarshalJSON) still write such an id as it was read.
	ID string
	// Cwd is the header's cwd, or "" when it is missing or not a string.
	Cwd string
	// Name is the trimmed name of the last session_info entry, when
	// HasName: false when there is none or its name is empty or blank,
	// which clears the name (pi 0.73.1).
	Name    string
	HasName bool
	// ParentSessionPath is the header's parentSession, the path of the
	// session this one was forked from; "" when it is missing or not a
	// string (the JSON encodings still write a non-string one as it was
	// read).
	ParentSessionPath string
	// Created is the header timestamp; CreatedValid is false when it does
	// not parse (pi's Invalid Date, null in JSON).
	Created      time.Time
	CreatedValid bool
	// Modified is the time of the last user or assistant message, else the
	// header time, else the file's mtime.
	Modified time.Time
	// MessageCount counts message entries of every role.
	MessageCount int
	// FirstMessage is the text of the first user message with text, or
	// "(no messages)".
	FirstMessage string
	// allTextJSON is AllMessagesText as a JSON string (nil for ""),
	// decoded only when asked for. firstJSON is FirstMessage as the JSON
	// string it was read as, which can hold what a Go string cannot (a
	// lone surrogate escape); nil when not read from a file.
	allTextJSON []byte
	firstJSON   []byte
	// idJSON and parentJSON are the header's id and parentSession as
	// the JSON they were read as (nil when missing), so the encodings
	// pass a value of any type through as pi does while ID and
	// ParentSessionPath still hold it.
	idJSON     []byte
	parentJSON []byte
	// Size and ModTime are the file's size and mtime when it was read.
	Size    int64
	ModTime time.Time
	// stamp is the stat the info was read under (see stamp).
	stamp stamp

	// cache holds the encoded fields of an info read from the list
	// index, with the values they encode, so AppendJSON can copy them.
	cache *infoCache
}

// infoCache is the list index's encoding of an info (see headJSON).
type infoCache struct {
	head []byte
	snap Info // the fields head encodes, as decoded
}

// cachedHead returns the cached encoding when the info still holds the
// values it encodes (a caller may have changed a field of its copy).
// Strings that share their bytes compare in constant time.
func (i *Info) cachedHead() []byte {
	c := i.cache
	if c == nil {
		return nil
	}
	s := &c.snap
	if i.Cwd != s.Cwd || i.Name != s.Name || i.HasName != s.HasName || i.CreatedValid != s.CreatedValid ||
		!i.Created.Equal(s.Created) || !i.Modified.Equal(s.Modified) || i.MessageCount != s.MessageCount ||
		i.FirstMessage != s.FirstMessage || i.ID != s.ID || i.ParentSessionPath != s.ParentSessionPath {
		return nil
	}
	return c.head
}

// AllMessagesText returns the texts of all user and assistant messages
// joined with single spaces (pi's allMessagesText, the bulk of a listing:
// it is decoded on demand); "" when the listing was made with
// ListOptions.NoText.
func (i *Info) AllMessagesText() string {
	s, _ := jsonl.String(i.allTextJSON)
	return s
}

// idText is the Go value of a header id read as JSON v: a string's
// value, "" for null, any other value's JSON text.
func idText(v []byte) string {
	if s, ok := jsonl.String(v); ok {
		return s
	}
	if jsonl.KindOf(v) == KindNull {
		return ""
	}
	return string(v)
}

// parentText is the Go value of a header parentSession read as JSON v:
// a string's value, else "".
func parentText(v []byte) string {
	s, _ := jsonl.String(v)
	return s
}

// ListOptions configure Store.List and Store.Sessions.
type ListOptions struct {
	// Progress, when not nil, is called after each file with the number
	// of files done and the total, from one goroutine at a time.
	Progress func(loaded, total int)
	// NoIndex reads every file instead of using the list index (kept in
	// the store's cache directory, one file per session directory); the
	// index is then neither read nor written. The index never changes
	// what a listing returns, only how fast it is.
	NoIndex bool
	// NoText leaves AllMessagesText empty: the texts of the messages, most
	// of a listing's bytes, are neither gathered from the files nor read
	// from the list index. For a caller that does not show them (a table
	// of sessions), or takes them one at a time once it has sorted the
	// listing (Store.ListTexts); every other field is as without it.
	NoText bool
	// Warn, when not nil, is told about each file named like a session
	// that was left out because it could not be read (permission denied,
	// a broken or looping symbolic link, a named pipe or other special
	// file: vfs.ErrNotRegular), and each directory of the store that
	// could not be read. The error names the file. Files that are read
	// but are not sessions (no header) are left out silently, as pi
	// leaves them out. Warn is called after the listing, in path order,
	// from the calling goroutine.
	Warn func(err error)
	// EveryCwd lists, from a Dir store's directory (Store.List and
	// Sessions with a cwd), every session of the directory, as pi 0.73.1
	// did. Without it only the sessions whose header cwd is that cwd are
	// listed, both resolved as pi resolves paths (layout.ResolvePath): pi
	// 1.x's list(cwd, sessionDir) for a directory that is not the cwd's
	// default one, so that one project is never handed another's.
	EveryCwd bool
}

// listing is a listing's options with the store's filesystem and cache
// directory.
type listing struct {
	ListOptions
	FS       vfs.FS
	CacheDir string
}

func (o listing) fs() vfs.FS { return orOS(o.FS) }

// withCache resolves the cache directory once for a listing; without one
// there is no index.
func (o listing) withCache() listing {
	if !o.NoIndex {
		o.CacheDir = cacheindex.ResolveDir(o.CacheDir)
		o.NoIndex = o.CacheDir == ""
	}
	return o
}

// listDir returns the sessions of one directory, newest modification
// first, as pi's SessionManager.list does (see Store.List).
func listDir(ctx context.Context, o listing, dir string) ([]Info, error) {
	o = o.withCache()
	files, err := sessionFilesIndexed(o, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []Info{}, nil
		}
		return nil, err
	}
	return listFiles(ctx, o, []dirFiles{files})
}

// listAll returns the sessions of every per-cwd directory under an
// agent's sessions directory root (immediate subdirectories only,
// symlinks not followed), newest modification first (pi's listAll).
func listAll(ctx context.Context, o listing, root string) ([]Info, error) {
	o = o.withCache()
	fsys := o.fs()
	ents, err := fsys.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []Info{}, nil
		}
		return nil, err
	}
	var dirs []dirFiles
	var warns []error
	for _, d := range ents {
		if d.Type()&fs.ModeSymlink != 0 || !d.IsDir() {
			continue
		}
		files, err := sessionFilesIndexed(o, filepath.Join(root, d.Name()))
		if err != nil {
			warns = append(warns, readDirError(filepath.Join(root, d.Name()), err))
			continue
		}
		dirs = append(dirs, files)
	}
	return listFilesWarn(ctx, o, dirs, warns)
}

// listTree returns the sessions of root and of every directory below it,
// newest modification first: a store laid out any way. The files are
// those Store.Files finds: .trash directories are left out and symbolic
// links to directories are not followed. A missing root is an error
// matching fs.ErrNotExist; unreadable directories below it are reported
// to o.Warn and skipped.
func listTree(ctx context.Context, o listing, root string) ([]Info, error) {
	o = o.withCache()
	dirs, skipped, err := walkStore(ctx, root, func(dir string) (dirFiles, error) {
		return sessionFilesIndexed(o, dir)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	// The special files are reported with the files that could not be
	// read, in path order.
	var warns []error
	for _, err := range skipped {
		if !errors.Is(err, vfs.ErrNotRegular) {
			warns = append(warns, err)
		}
	}
	return listFilesWarn(ctx, o, dirs, warns)
}

// dirFiles is one directory's *.jsonl files.
type dirFiles struct {
	dir   string
	names []string
	// stats holds the lstat of each regular file; nil when it failed or
	// the name is a symbolic link, whose own times say nothing of its
	// target: those are always read, never cached.
	stats []fs.FileInfo
	links []bool // names that are symbolic links
	// statRead says that the files were not stat'ed beforehand (there
	// is no index to compare them with): each file's index entry takes
	// the size and time of the file as it was read.
	statRead bool
	index    map[string]indexEntry
	texts    map[string]textEntry // the text index, when the listing wants texts
	special  []string             // *.jsonl names that are named pipes, sockets or devices
	subdirs  []string             // directories, not symbolic links to them
}

// sessionFilesIndexed is sessionFiles that also reads the directory's
// list index (unless o.NoIndex), at the same time as the stats are taken.
func sessionFilesIndexed(o listing, dir string) (dirFiles, error) {
	fsys := o.fs()
	var index map[string]indexEntry
	var texts map[string]textEntry
	done := make(chan struct{})
	if !o.NoIndex {
		if _, err := fsys.Lstat(listIndexPath(o.CacheDir, dir)); err != nil {
			// No index: every file is read, and its index entry takes the
			// stat of the read rather than one taken before (a first
			// listing costs about what a listing without the index does).
			files, err := sessionFiles(fsys, dir, false)
			files.statRead = true
			return files, err
		}
	}
	if o.NoIndex {
		close(done)
	} else {
		go func() {
			defer close(done)
			index = readIndex(fsys, o.CacheDir, dir)
			if !o.NoText {
				texts = readTexts(fsys, o.CacheDir, dir)
			}
		}()
	}
	files, err := sessionFiles(fsys, dir, !o.NoIndex)
	<-done
	files.index, files.texts = index, texts
	return files, err
}

// notRegular are the file types that are neither regular files nor
// symbolic links.
const notRegular = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// sessionFiles lists the *.jsonl files of dir, by name, and with
// withStats their stats (taken on every CPU for a large directory; only
// the list index needs them).
func sessionFiles(fsys vfs.FS, dir string, withStats bool) (dirFiles, error) {
	out := dirFiles{dir: dir}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return out, err
	}
	files := make([]fs.DirEntry, 0, len(ents))
	for _, d := range ents {
		// Directories and special files are not sessions; opening a named
		// pipe would wait for a writer forever (pi's list hangs on one).
		switch {
		case d.IsDir():
			out.subdirs = append(out.subdirs, d.Name())
		case !layout.IsSessionFileName(d.Name()):
		case d.Type()&notRegular != 0:
			out.special = append(out.special, d.Name())
		default:
			files = append(files, d)
		}
	}
	out.names = make([]string, len(files))
	out.stats = make([]fs.FileInfo, len(files))
	out.links = make([]bool, len(files))
	for i, f := range files {
		out.links[i] = f.Type()&fs.ModeSymlink != 0
	}
	if !withStats {
		for i, f := range files {
			out.names[i] = f.Name()
		}
		return out, nil
	}
	stat := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out.names[i] = files[i].Name()
			if files[i].Type()&fs.ModeSymlink != 0 {
				continue
			}
			if st, err := files[i].Info(); err == nil && st.Mode().IsRegular() {
				out.stats[i] = st
			}
		}
	}
	n := runtime.GOMAXPROCS(0)
	if len(files) < 256 || n < 2 {
		stat(0, len(files))
		return out, nil
	}
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { stat(len(files)*k/n, len(files)*(k+1)/n) })
	}
	wg.Wait()
	return out, nil
}

// listFiles builds the infos of the files (from the list index where it is
// valid, reading the others on every CPU), refreshes the indexes, and sorts.
// The files that could not be read are reported to o.Warn, after warns.
func listFiles(ctx context.Context, o listing, dirs []dirFiles) ([]Info, error) {
	return listFilesWarn(ctx, o, dirs, nil)
}

// listFilesWarn is listFiles, reporting warns to o.Warn before the
// errors of its own reads.
func listFilesWarn(ctx context.Context, o listing, dirs []dirFiles, warns []error) ([]Info, error) {
	r := newListRun(o, dirs)
	r.plan()
	if err := r.read(ctx); err != nil {
		return nil, err
	}
	if o.Warn != nil {
		r.warn(warns)
	}
	if !o.NoIndex {
		slot := 0
		for di := range dirs {
			slot = r.refresh(di, slot)
		}
	}
	return sortInfos(r.infos, len(dirs) > 1), nil
}

// listJob is a file listFiles reads: its directory, name, stat (nil for
// a symbolic link or a stat that failed) and slot in the result.
type listJob struct {
	dir, name string
	st        fs.FileInfo
	slot      int
}

// listRun is one listing of some directories' files: the result slots
// (a slot per name, in order), why a file could not be listed, the
// directories' list indexes and which of them must be written again.
type listRun struct {
	o        listing
	dirs     []dirFiles
	fsys     vfs.FS
	started  time.Time
	infos    []*Info
	readErrs []error
	indexes  []map[string]indexEntry
	// dirty: the directory's list index must be written again;
	// textDirty: its texts index.
	dirty, textDirty []bool
	jobs             []listJob
	total, done      int
}

func newListRun(o listing, dirs []dirFiles) *listRun {
	total := 0
	for _, d := range dirs {
		total += len(d.names)
	}
	return &listRun{
		o: o, dirs: dirs, fsys: o.fs(), started: time.Now(),
		infos:     make([]*Info, total),
		readErrs:  make([]error, total),
		indexes:   make([]map[string]indexEntry, len(dirs)),
		dirty:     make([]bool, len(dirs)),
		textDirty: make([]bool, len(dirs)),
		total:     total,
	}
}

// plan fills the slots the list index answers for (its entry and, with
// texts, its texts entry match the file's stat) and makes a job of every
// other file, marking the indexes that will change.
func (r *listRun) plan() {
	o := r.o
	slot := 0
	for di, d := range r.dirs {
		if d.statRead {
			r.dirty[di], r.textDirty[di] = true, !o.NoText
		}
		if !o.NoIndex {
			r.indexes[di] = d.index
			cached := 0 // files the index can hold (not symbolic links)
			for _, st := range d.stats {
				if st != nil {
					cached++
				}
			}
			if len(r.indexes[di]) != cached {
				r.dirty[di] = true // files came or went
			}
			if !o.NoText && len(d.texts) != cached {
				r.textDirty[di] = true
			}
		}
		for i, name := range d.names {
			st := d.stats[i]
			if ix := r.indexes[di]; ix != nil && st != nil {
				if r.fromIndex(di, ix, name, st, slot) {
					slot++
					continue
				}
			}
			r.jobs = append(r.jobs, listJob{d.dir, name, st, slot})
			slot++
		}
	}
}

// fromIndex fills slot from directory di's index entry of name when it
// is valid for st, and reports whether it did; otherwise it marks what
// the read will change.
func (r *listRun) fromIndex(di int, ix map[string]indexEntry, name string, st fs.FileInfo, slot int) bool {
	o := r.o
	ent, ok := ix[name]
	ok = ok && ent.stamp == cacheindex.StampOf(st)
	var text textEntry
	textOK := o.NoText || ent.info == nil
	if ok && !textOK {
		text, textOK = r.dirs[di].texts[name]
		textOK = textOK && text.stamp == cacheindex.StampOf(st)
	}
	if ok && textOK {
		if ent.info != nil {
			in := ent.info
			if !o.NoText {
				c := *in
				c.allTextJSON = text.text
				in = &c
			}
			r.infos[slot] = in
		}
		r.done++
		if o.Progress != nil {
			o.Progress(r.done, r.total)
		}
		return true
	}
	if !ok {
		r.dirty[di] = true
	}
	if !o.NoText {
		r.textDirty[di] = true
	}
	return false
}

// read runs the jobs on every CPU: workers take the next job from a
// shared counter; only progress reports, which must come one at a time,
// take a lock. It returns ctx's error when ctx was done.
func (r *listRun) read(ctx context.Context) error {
	o := r.o
	var mu sync.Mutex
	var next atomic.Int64
	var canceled atomic.Bool
	workers := min(runtime.GOMAXPROCS(0), len(r.jobs))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []byte // reused: infos copy what they keep
			var b infoBuilder
			for {
				k := int(next.Add(1) - 1)
				if k >= len(r.jobs) {
					return
				}
				if ctx.Err() != nil {
					canceled.Store(true)
					return
				}
				j := r.jobs[k]
				info, err := readInfoBuf(r.fsys, filepath.Join(j.dir, j.name), &buf, &b, o.NoText)
				if err == nil {
					r.infos[j.slot] = info
				} else if !errors.Is(err, errNotSession) {
					r.readErrs[j.slot] = err
				}
				if o.Progress != nil {
					mu.Lock()
					r.done++
					o.Progress(r.done, r.total)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if canceled.Load() {
		return ctx.Err()
	}
	return nil
}

// warn reports warns, then each file that could not be read and each
// special file, in listing order, to o.Warn.
func (r *listRun) warn(warns []error) {
	for _, err := range warns {
		r.o.Warn(err)
	}
	slot := 0
	for _, d := range r.dirs {
		for range d.names {
			if err := r.readErrs[slot]; err != nil {
				r.o.Warn(err)
			}
			slot++
		}
		for _, name := range d.special {
			r.o.Warn(&fs.PathError{Op: "open", Path: filepath.Join(d.dir, name), Err: vfs.ErrNotRegular})
		}
	}
}

// refresh writes directory di's list index (and texts index) again where
// they changed, from the slots from slot on, and returns the slot after
// the directory's.
func (r *listRun) refresh(di, slot int) int {
	o, d := r.o, r.dirs[di]
	fresh := make(map[string]indexEntry, len(d.names))
	var texts map[string]textEntry
	if r.textDirty[di] {
		texts = make(map[string]textEntry, len(d.names))
	}
	for i, name := range d.names {
		in := r.infos[slot]
		failed := r.readErrs[slot] != nil
		slot++
		if failed {
			continue // a read that failed is tried again next time
		}
		var now stamp
		switch {
		case d.stats[i] != nil:
			now = cacheindex.StampOf(d.stats[i])
			if old, ok := r.indexes[di][name]; ok && old.stamp == now {
				fresh[name] = old
				if texts != nil && in != nil {
					texts[name] = textEntry{now, allTextJSON(in)}
				}
				continue
			}
			if in != nil && in.stamp != now {
				continue // changed since it was stat'ed
			}
		case d.statRead && in != nil && !d.links[i]:
			now = in.stamp // the stat of the read
		default:
			continue // a symbolic link, or a stat that failed
		}
		// Only files that are not being written right now are cached.
		if !cacheindex.Cacheable(time.Unix(0, now.MtimeNs), r.started) {
			continue
		}
		fresh[name] = indexEntry{now, in}
		if texts != nil && in != nil {
			texts[name] = textEntry{now, allTextJSON(in)}
		}
	}
	if r.dirty[di] {
		writeIndex(r.fsys, o.CacheDir, d.dir, fresh, d.names)
	}
	if texts != nil {
		writeTexts(r.fsys, o.CacheDir, d.dir, texts, d.names)
	}
	return slot
}

// sortInfos returns the listed infos newest first. pi 1.x reads a
// directory's files in descending name order (the files of several
// directories by descending mtime, then name), and its sort by
// modification time is stable: ties keep that order. It sorts pointers,
// then copies once.
func sortInfos(infos []*Info, several bool) []Info {
	live := make([]*Info, 0, len(infos))
	for _, in := range infos {
		if in != nil {
			live = append(live, in)
		}
	}
	slices.SortStableFunc(live, func(a, b *Info) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		if several {
			if c := b.ModTime.Compare(a.ModTime); c != 0 {
				return c
			}
		}
		return strings.Compare(filepath.Base(b.Path), filepath.Base(a.Path))
	})
	out := make([]Info, len(live))
	for i, in := range live {
		out[i] = *in
	}
	return out
}

// errNotSession is returned by readInfo for files pi does not list.
var errNotSession = errors.New("not a session file")

// readInfo reads one file's Info without migrating it. Files whose
// first JSON object is not a session header are reported with
// errNotSession (pi leaves them out of listings).
func readInfo(fsys vfs.FS, path string) (*Info, error) {
	var buf []byte
	var b infoBuilder
	return readInfoBuf(orOS(fsys), path, &buf, &b, false)
}

// readInfoBuf is readInfo reading into *buf, which it grows and keeps for
// the next file; with noText the info's AllMessagesText is left empty.
func readInfoBuf(fsys vfs.FS, path string, buf *[]byte, b *infoBuilder, noText bool) (*Info, error) {
	// Read up to the size stat gave (the size the list index keys on): a
	// line appended since is not needed.
	data, st, err := vfs.ReadIntoInfo(fsys, path, *buf)
	*buf = data
	if err != nil {
		return nil, err
	}
	info, err := b.build(path, data, st.ModTime(), st.Size(), noText)
	if info != nil {
		info.stamp = cacheindex.StampOf(st)
	}
	return info, err
}

// build computes the Info of a file from its bytes, mtime and size; b's
// buffers are reused from file to file. The result shares no memory with
// data.
func (b *infoBuilder) build(path string, data []byte, mtime time.Time, size int64, noText bool) (*Info, error) {
	b.start(path, mtime, size, noText)
	jsonl.EachEntry(data, b.add)
	return b.finish()
}

// infoBuilder computes an Info entry by entry.
type infoBuilder struct {
	info      *Info
	header    bool // the first object was a session header
	seen      bool // any object was seen
	headerMs  float64
	headerOK  bool
	headerStr bool
	// text is allMessagesText as a JSON string so far, without its closing
	// quote: texts are copied in their escaped form, never decoded.
	text []byte
	// firstJSON is the first user text, as a JSON string.
	firstJSON []byte
	last      float64
	hasLast   bool
	// noText gathers no text beyond the first user message's.
	noText bool
}

func (b *infoBuilder) start(path string, mtime time.Time, size int64, noText bool) {
	*b = infoBuilder{info: &Info{Path: path, Size: size, ModTime: mtime}, text: append(b.text[:0], '"'), noText: noText}
}

// add takes the next object line; it returns false once the file is known
// not to be a session.
func (b *infoBuilder) add(e *Entry, m *jsonl.MessageMembers) bool {
	info := b.info
	if !b.seen {
		b.seen = true
		if !e.IsHeader() {
			return false
		}
		b.header = true
		if id, ok := e.Field("id"); ok {
			info.idJSON = bytes.Clone(id)
			info.ID = idText(id)
		}
		if cwd, ok := e.StringField("cwd"); ok {
			info.Cwd = cwd
		}
		if ps, ok := e.Field("parentSession"); ok {
			info.parentJSON = bytes.Clone(ps)
			info.ParentSessionPath = parentText(ps)
		}
		ts, tsOK := e.Field("timestamp")
		b.headerMs, b.headerOK = dateValue(ts, tsOK)
		b.headerStr = jsonl.KindOf(ts) == KindString
		if b.headerOK {
			info.Created, info.CreatedValid = time.UnixMilli(int64(b.headerMs)).UTC(), true
		}
		return true
	}
	switch e.Type {
	case jsonl.TypeSessionInfo:
		// The last one wins; an empty or blank name clears the name.
		n, _ := e.StringField("name")
		info.Name = jsTrim(n)
		info.HasName = info.Name != ""
		return true
	case jsonl.TypeMessage:
	default:
		return true
	}
	info.MessageCount++
	msg := e.Message()
	if msg == nil || (e.Role != "user" && e.Role != "assistant") {
		return true
	}
	if m.Content == nil { // pi: no "content" key, not counted
		return true
	}
	if f, ok := jsonl.Number(m.Timestamp); ok {
		if !b.hasLast || f > b.last {
			b.last, b.hasLast = f, true
		}
	} else if ms, ok := jsonl.ParseDate(e.Timestamp); ok && e.Timestamp != "" {
		if !b.hasLast || ms > b.last {
			b.last, b.hasLast = ms, true
		}
	}
	if b.noText && (b.firstJSON != nil || e.Role != "user") {
		return true // only the first user text is wanted
	}
	mark := len(b.text)
	if len(b.text) > 1 { // a text before this one, after the opening quote
		b.text = append(b.text, ' ')
	}
	start := len(b.text)
	b.text = appendTextOf(b.text, m)
	if len(b.text) == start { // no text: the escaped form is empty too
		b.text = b.text[:mark]
		return true
	}
	if b.firstJSON == nil && e.Role == "user" {
		b.firstJSON = append(append([]byte{'"'}, b.text[start:]...), '"')
	}
	return true
}

func (b *infoBuilder) finish() (*Info, error) {
	if !b.header {
		return nil, errNotSession
	}
	info := b.info
	info.FirstMessage, info.firstJSON = "(no messages)", nil
	if b.firstJSON != nil {
		info.FirstMessage, _ = jsonl.String(b.firstJSON)
		info.firstJSON = b.firstJSON
	}
	if !b.noText {
		b.text = append(b.text, '"')
		info.allTextJSON = bytes.Clone(b.text)
	}
	switch {
	case b.hasLast && b.last > 0:
		info.Modified = time.UnixMilli(int64(b.last)).UTC()
	case b.headerOK && b.headerStr:
		info.Modified = info.Created
	default:
		info.Modified = info.ModTime.UTC()
	}
	// Not encoded here: a table shows no JSON, and the index and
	// AppendJSON encode the head when they need it (headJSON).
	return info, nil
}

// dateValue is new Date(v).getTime() for a JSON value: strings parse,
// numbers are taken as milliseconds, a missing value is NaN.
func dateValue(v []byte, present bool) (float64, bool) {
	if !present {
		return 0, false
	}
	switch jsonl.KindOf(v) {
	case KindString:
		s, _ := jsonl.String(v)
		return jsonl.ParseDate(s)
	case KindNumber:
		f, _ := jsonl.Number(v)
		if f != f || f > 8.64e15 || f < -8.64e15 {
			return 0, false
		}
		return float64(int64(f)), true
	case KindNull:
		return 0, true // new Date(null) is the epoch
	}
	return 0, false
}

// appendTextOf appends pi's extractTextContent of a message's content,
// escaped as in a JSON string: a string as is; for an array, the text of
// its "text" blocks (m.Texts) joined with spaces, each as
// Array.prototype.join renders it. (pi throws, and leaves the whole file
// out of the listing, for content of another type or a null block; those
// add no text here.)
func appendTextOf(dst []byte, m *jsonl.MessageMembers) []byte {
	switch jsonl.KindOf(m.Content) {
	case KindString:
		return jsonl.AppendEscapedToken(dst, m.Content)
	case KindArray:
		for n, text := range m.Texts {
			if n > 0 {
				dst = append(dst, ' ')
			}
			switch jsonl.KindOf(text) {
			case KindString:
				dst = jsonl.AppendEscapedToken(dst, text)
			case KindNull, KindAbsent: // join renders them empty
			default:
				dst = jsonl.AppendEscaped(dst, string(jsonl.AppendJSText(nil, text)))
			}
		}
	}
	return dst
}

// findMostRecent returns the session file in dir that pi's
// continueRecent would pick (pi's findMostRecentSession): among the
// *.jsonl files whose first line, read from their first 512 bytes, is a
// session header with a string id, the one with the newest mtime; with
// skipChildren, files whose header has a parentSession are passed over.
// ok is false when there is none.
//
// The files are stat'ed first (on every CPU for a large directory) and
// their headers read newest first, so that in a directory of thousands of
// sessions only the newest one or two are opened: the same answer as
// reading every header, at the cost of the stats.
func findMostRecent(fsys vfs.FS, dir string, skipChildren bool, cwd string) (path string, ok bool) {
	files, err := sessionFiles(fsys, dir, true)
	if err != nil {
		return "", false
	}
	type cand struct {
		name  string
		mtime time.Time
	}
	cands := make([]cand, 0, len(files.names))
	for i, n := range files.names {
		st := files.stats[i]
		if st == nil { // a symbolic link, or a stat that failed: pi's statSync follows it
			if st, err = fsys.Stat(filepath.Join(dir, n)); err != nil {
				continue
			}
		}
		cands = append(cands, cand{n, st.ModTime()})
	}
	// Newest first; among equal times the first by name, as the scan
	// keeps the first of equal times in ReadDir's (name) order.
	slices.SortStableFunc(cands, func(a, b cand) int { return b.mtime.Compare(a.mtime) })
	for _, c := range cands {
		name := filepath.Join(dir, c.name)
		if h, ok := headerInFirst512(fsys, name); ok && (!skipChildren || !h.HasParentSession) && (cwd == "" || sameCwd(h.Cwd, cwd)) {
			return name, true
		}
	}
	return "", false
}

// sameCwd reports whether a header's cwd is the cwd asked for, both
// resolved as pi resolves them (pi 1.x's sessionCwdMatches).
func sameCwd(header, cwd string) bool {
	return header != "" && layout.ResolvePath(header) == layout.ResolvePath(cwd)
}

func headerInFirst512(fsys vfs.FS, name string) (jsonl.Header, bool) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return jsonl.Header{}, false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	if i := strings.IndexByte(string(buf), '\n'); i >= 0 {
		buf = buf[:i]
	}
	e, err := jsonl.ParseEntry(buf)
	if err != nil || !e.IsHeader() || e.IDKind != KindString {
		return jsonl.Header{}, false
	}
	return jsonl.ParseHeader(e), true
}

// continueRecent is Store.ContinueRecent in the session directory
// opts.Dir.
func continueRecent(ctx context.Context, cwd string, opts options) (*Session, error) {
	dir, err := opts.sessionDir()
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if path, ok := findMostRecent(opts.fs(), dir, opts.SkipChildSessions, opts.onlyCwd); ok {
		opts.Cwd = cwd
		return open(ctx, path, opts)
	}
	return create(ctx, cwd, opts)
}
