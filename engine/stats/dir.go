package stats

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// DirTotal is the Scope of every session file under a directory.
type DirTotal struct {
	Sessions int // the files counted
	Skipped  int // the files that could not be read, or are not sessions
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
}

// errNoHeader is why Dir leaves out a file without a session header.
var errNoHeader = errors.New("no session header")

// Dir adds up every session file under root: every *.jsonl file,
// recursively, leaving out the .trash directories below root (where
// deleted sessions are kept). Files are read without a lock; a file that
// cannot be read, has no session header with a string id, or cannot be
// migrated is skipped, and so is a directory below root that cannot be
// read: each is told to opts.Skip.
func Dir(ctx context.Context, root string, opts DirOptions) (*DirTotal, error) {
	total := &DirTotal{All: NewScope()}
	skip := func(p string, err error) {
		if opts.Skip != nil {
			opts.Skip(p, err)
		}
		total.Skipped++
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			total.Unread++
			if opts.Skip != nil {
				opts.Skip(p, err)
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".trash" && p != root {
			return filepath.SkipDir // sessions moved aside by 'sessctl delete'
		}
		if d.IsDir() || !layout.IsSessionFileName(d.Name()) {
			return nil
		}
		data, err := vfs.ReadRegular(p)
		if err != nil {
			total.Unread++
			skip(p, err)
			return nil
		}
		parsed := jsonl.ParseFile(data)
		if len(parsed.Entries) == 0 || !parsed.Entries[0].IsHeader() || parsed.Entries[0].IDKind != jsonl.KindString {
			skip(p, errNoHeader)
			return nil
		}
		if opts.Header != nil {
			opts.Header(p, parsed.Entries[0])
		}
		entries, _, merr := migrate.Entries(parsed.Entries)
		if merr != nil {
			skip(p, merr)
			return nil
		}
		for i := 1; i < len(entries); i++ {
			if !entries[i].IsHeader() {
				total.All.Add(&entries[i])
			}
		}
		total.Sessions++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stats of %s: %w", root, err)
	}
	total.All.Finish()
	return total, nil
}
