package stats

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
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

// DirOptions configure Dir. The zero value counts quietly.
type DirOptions struct {
	// Skip, when set, is told of each file Dir leaves out and each
	// directory it could not read, and why.
	Skip func(path string, err error)
	// Header, when set, is given the header line of each file Dir
	// counts, before its entries (to warn of a newer format version, say).
	Header func(path string, header jsonl.Entry)
	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
}

// errNoHeader is why Dir leaves out a file without a session header.
var errNoHeader = errors.New("no session header")

// Dir adds up every session file of the store at root, as
// engine.Store.Files finds them (the .trash directories below root, where
// deleted sessions are kept, are left out). Files are read without a
// lock; a file that cannot be read, has no session header with a string
// id, or cannot be migrated is skipped, and so is each directory below
// root that cannot be read: each is told to opts.Skip.
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
	for f, err := range st.Files(ctx) {
		if err != nil {
			if f.Path == "" {
				return nil, fmt.Errorf("stats of %s: %w", root, err)
			}
			// Left out by the walk: a directory that could not be read,
			// a special file.
			if errors.Is(err, vfs.ErrNotRegular) {
				total.Skipped++
			}
			total.Unread++
			skip(f.Path, err)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stats of %s: %w", root, err)
		}
		p := f.Path
		data, err := fsys.ReadFile(p)
		if err != nil {
			total.Skipped++
			total.Unread++
			skip(p, err)
			continue
		}
		parsed := jsonl.ParseFile(data)
		if len(parsed.Entries) == 0 || !parsed.Entries[0].IsHeader() || parsed.Entries[0].IDKind != jsonl.KindString {
			total.Skipped++
			skip(p, errNoHeader)
			continue
		}
		if opts.Header != nil {
			opts.Header(p, parsed.Entries[0])
		}
		entries, _, merr := migrate.Entries(parsed.Entries)
		if merr != nil {
			total.Skipped++
			skip(p, merr)
			continue
		}
		for i := 1; i < len(entries); i++ {
			if !entries[i].IsHeader() {
				total.All.Add(&entries[i])
			}
		}
		total.Sessions++
	}
	total.All.Finish()
	return total, nil
}
