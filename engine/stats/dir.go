package stats

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// DirTotal is the Scope of every session file under a directory.
type DirTotal struct {
	Sessions int // the files counted
	// Skipped counts the files left out: those that could not be read,
	// have no session header or cannot be migrated.
	Skipped int
	// Unread counts the directories and files that could not be read
	// (the files among them are in Skipped too): the total may miss
	// sessions.
	Unread int
	All    *Scope // every entry of the files counted (migrated to version 3)
}

// DirOptions configure Dir. The zero value counts quietly, with the
// stats index.
type DirOptions struct {
	// Skip, when set, is told of each file Dir leaves out and each
	// directory it could not read, and why. For a file the stats index
	// remembers as left out (no session header, a migration that
	// failed), the error carries the message of the first reading, not
	// its type: match it with errors.Is only under NoIndex.
	Skip func(path string, err error)
	// Header, when set, is given the header line of each file Dir
	// counts, before its entries (to warn of a newer format version, say).
	Header func(path string, header engine.Entry)
	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
	// NoIndex reads every file instead of using the stats index (kept in
	// the cache directory, one file per session directory); the index is
	// then neither read nor written. The index never changes what Dir
	// returns or reports (but for the errors' types, see Skip), only how
	// fast it is.
	NoIndex bool
	// CacheDir is where the stats index lives; "" means
	// layout.CacheDir(). An index is never kept inside the store.
	CacheDir string
	// Usage, when set, is given what each file Dir counts spent per day
	// and model, in path order (after Header). It comes from the stats
	// index as the rest does.
	Usage func(*FileUsage)
}

// errNoHeader is why Dir leaves out a file without a session header.
var errNoHeader = errors.New("no session header")

// Dir adds up every session file of the store at root, as
// engine.Store.Files finds them (the .trash directories below root, where
// deleted sessions are kept, are left out). Files are read without a
// lock; a file that cannot be read, has no session header with a string
// id, or cannot be migrated is skipped, and so is each directory below
// root that cannot be read: each is told to opts.Skip, in path order.
//
// What each file adds is taken from the stats index while the file is
// unchanged (see DirOptions.NoIndex); files are read on every CPU.
// The files' counts are added up in path order either way, so the
// totals do not depend on the index.
func Dir(ctx context.Context, root string, opts DirOptions) (*DirTotal, error) {
	total := &DirTotal{All: NewScope()}
	skip := func(p string, err error) {
		if opts.Skip != nil {
			opts.Skip(p, err)
		}
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: root, FS: fsys})
	if err != nil {
		return nil, fmt.Errorf("stats of %s: %w", root, err)
	}
	cacheDir := ""
	if !opts.NoIndex {
		cacheDir = indexCacheDir(opts.CacheDir, root)
	}
	var items []dirItem
	for f, err := range st.Files(ctx) {
		if err != nil && f.Path == "" {
			return nil, fmt.Errorf("stats of %s: %w", root, err)
		}
		it := dirItem{path: f.Path, link: f.Link, walk: err}
		it.dir, it.name = splitPath(f.Path)
		items = append(items, it)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stats of %s: %w", root, err)
	}
	// The files of each directory, to know when it is done.
	left := map[string]int{}
	members := map[string][]int{}
	for i := range items {
		if it := &items[i]; it.walk == nil {
			left[it.dir]++
			members[it.dir] = append(members[it.dir], i)
		}
	}
	// Go through the files a window at a time: load the index of each
	// directory met, take from it the files that are unchanged, read the
	// others, on every CPU; add up in path order; then rewrite the index
	// of each directory done if it changed, and let go of what its files
	// add.
	started := time.Now()
	indexes := map[string]map[string]indexEntry{}
	dirty := map[string]bool{} // directories whose index is to be rewritten
	for lo := 0; lo < len(items); lo += window {
		hi := min(lo+window, len(items))
		if cacheDir != "" {
			var dirs []string
			for i := lo; i < hi; i++ {
				if it := &items[i]; it.walk == nil {
					if _, ok := indexes[it.dir]; !ok {
						indexes[it.dir] = nil
						dirs = append(dirs, it.dir)
					}
				}
			}
			loaded := make([]map[string]indexEntry, len(dirs))
			parallel(len(dirs), func(_ *[]byte, k int) { loaded[k] = readIndex(fsys, cacheDir, dirs[k]) })
			for k, dir := range dirs {
				indexes[dir] = loaded[k]
			}
			parallel(hi-lo, func(_ *[]byte, k int) {
				it := &items[lo+k]
				if it.walk != nil || it.link {
					return
				}
				ent, ok := indexes[it.dir][it.name]
				if !ok {
					return
				}
				if fi, err := fsys.Lstat(it.path); err == nil && fi.Mode().IsRegular() && cacheindex.StampOf(fi) == ent.Stamp {
					it.stats = ent.stats
					it.size, it.mtime = fi.Size(), fi.ModTime()
				}
			})
		}
		var jobs []int
		for i := lo; i < hi; i++ {
			if it := &items[i]; it.walk == nil && it.stats == nil {
				jobs = append(jobs, i)
				if !it.link { // a symbolic link is never in the index
					dirty[it.dir] = true
				}
			}
		}
		parallel(len(jobs), func(buf *[]byte, k int) {
			if ctx.Err() != nil {
				return
			}
			it := &items[jobs[k]]
			data, fi, err := vfs.ReadIntoInfo(fsys, it.path, *buf)
			*buf = data
			if err != nil {
				it.err = err
				return
			}
			it.stats = countFile(data)
			it.size, it.mtime = fi.Size(), fi.ModTime()
			if !it.link && fi.Mode().IsRegular() && cacheindex.Cacheable(fi.ModTime(), started) {
				stamp := cacheindex.StampOf(fi)
				it.stamp = &stamp
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stats of %s: %w", root, err)
		}
		for i := lo; i < hi; i++ {
			it := &items[i]
			if total.add(it, opts.Header, skip) && opts.Usage != nil {
				opts.Usage(it.stats.usageOf(it.path, it.size, it.mtime))
			}
			if it.walk != nil {
				continue
			}
			if left[it.dir]--; left[it.dir] > 0 {
				continue
			}
			if cacheDir != "" {
				finishIndex(fsys, cacheDir, it.dir, indexes[it.dir], dirty[it.dir], members[it.dir], items)
				indexes[it.dir] = nil
			}
			for _, m := range members[it.dir] {
				items[m].stats = nil
			}
		}
	}
	total.All.Finish()
	return total, nil
}

// window is how many files Dir reads and adds up at a time (a variable
// for tests).
var window = 4096

// add adds what the walk found at it to t, telling header and skip; it
// reports whether the file was counted.
func (t *DirTotal) add(it *dirItem, header func(string, jsonl.Entry), skip func(string, error)) bool {
	switch {
	case it.walk != nil:
		// Left out by the walk: a directory that could not be read, a
		// special file.
		if errors.Is(it.walk, vfs.ErrNotRegular) {
			t.Skipped++
		}
		t.Unread++
		skip(it.path, it.walk)
		return false
	case it.err != nil:
		t.Skipped++
		t.Unread++
		skip(it.path, it.err)
		return false
	}
	f := it.stats
	if f.header != nil && header != nil {
		header(it.path, f.headerEntry())
	}
	if f.skip != nil {
		t.Skipped++
		skip(it.path, f.skip)
		return false
	}
	t.All.merge(f.scope)
	t.Sessions++
	return true
}

// dirItem is what Dir's walk found, in path order: a file, or what the
// walk left out.
type dirItem struct {
	path  string
	dir   string // the directory of path, whose index has its entry
	name  string // path's base name
	link  bool
	walk  error             // left out by the walk
	err   error             // the read failed
	stats *fileStats        // what the file adds
	stamp *cacheindex.Stamp // the stat of the read, when it may be cached
	size  int64             // the file's, when stats was set
	mtime time.Time
}

// indexCacheDir returns the cache directory of the stats index of the
// store at root: dir, or layout.CacheDir(), or "" (no index) when there is
// none or the index would be inside the store.
func indexCacheDir(dir, root string) string {
	dir = cacheindex.ResolveDir(dir)
	if dir == "" {
		return ""
	}
	ix, r := cacheindex.AbsDir(filepath.Join(dir, statsIndexKind)), cacheindex.AbsDir(root)
	if ix == r || strings.HasPrefix(ix, r+string(filepath.Separator)) {
		return ""
	}
	return dir
}

// finishIndex rewrites the stats index old of the directory dir, whose
// files are items[members], if its files changed (dirty), came or went:
// its entries are the files found unchanged and those read that may be
// cached.
func finishIndex(fsys vfs.FS, cacheDir, dir string, old map[string]indexEntry, dirty bool, members []int, items []dirItem) {
	found := 0 // the files the index could hold
	for _, m := range members {
		if it := &items[m]; it.err == nil && !it.link {
			found++
		}
	}
	if !dirty && len(old) == found {
		return
	}
	fresh := make(map[string]indexEntry, len(members))
	for _, m := range members {
		it := &items[m]
		if it.err != nil || it.link {
			continue
		}
		if it.stamp != nil {
			fresh[it.name] = indexEntry{*it.stamp, it.stats}
		} else if ent, ok := old[it.name]; ok && ent.stats == it.stats {
			fresh[it.name] = ent
		}
	}
	writeIndex(fsys, cacheDir, dir, fresh)
}

// splitPath returns the directory and the base name of a path the walk
// gave (clean, below the store's directory), without filepath.Dir's
// cleaning where it is not needed.
func splitPath(path string) (dir, name string) {
	if i := strings.LastIndexByte(path, filepath.Separator); i > 0 && path[i-1] != ':' {
		return path[:i], path[i+1:]
	}
	return filepath.Dir(path), filepath.Base(path)
}

// parallel calls fn(buf, i) for i in [0, n) on every CPU, each worker with
// a buffer of its own to reuse.
func parallel(n int, fn func(buf *[]byte, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(&buf, i)
			}
		})
	}
	wg.Wait()
}
