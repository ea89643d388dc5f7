package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// The statuses of a Result.
const (
	StatusNew       = "new"       // the session file did not exist
	StatusUpdated   = "updated"   // it existed with other bytes, from an earlier import
	StatusUnchanged = "unchanged" // it already held exactly these bytes
	StatusKept      = "kept"      // it changed since it was imported, and was left alone
	StatusFailed    = "failed"    // it could not be written (Err says why)
)

// Result is what became of one imported session.
type Result struct {
	Session *migrate.Imported
	Path    string // the session file it goes to
	Parent  string // the parent session file written into its header, "" for none
	Status  string // one of the Status constants
	Err     error  // why it was kept (matches migrate.ErrNotImported) or failed; nil otherwise
}

// Handler is told, in order, what an Importer does. Every field may be
// nil.
type Handler struct {
	// Session is called for each imported session, after it was written
	// (or, in a dry run, after it was compared with the file).
	Session func(r Result)
	// Skip is called for a source session that gave nothing to import.
	Skip func(source string, sk *migrate.Skip)
	// Damage is called for damaged source data that was skipped.
	Damage func(d *migrate.Damage)
	// Fail is called for a store or session that could not be imported,
	// for a reason other than damage.
	Fail func(err error)
	// Warn is called for an error that loses nothing (closing a store).
	Warn func(err error)
}

// Options configure an Importer.
type Options struct {
	// AgentDir is the pi agent directory whose sessions directory
	// receives the imports (layout.AgentDir(layout.AgentPi) for pi's).
	AgentDir string
	// DryRun compares instead of writing: Results say what a real run
	// would do, and nothing is written.
	DryRun bool
	// Import is passed to each source's Open.
	Import migrate.ImportOptions
	// Command is recorded in the owner record of the writer lock each
	// write takes (default: the program name).
	Command string
	// FS is the filesystem of the pi store the imports are written to;
	// nil means vfs.OS(). The writer locks are kernel locks, so it must
	// be the real filesystem or a wrapper of it (vfstest.FaultFS).
	// Where the sources are read from is Import.FS.
	FS vfs.FS
}

// fs is Options.FS, or the real filesystem.
func (im *Importer) fs() vfs.FS {
	if im.opts.FS == nil {
		return vfs.OS()
	}
	return im.opts.FS
}

// Importer imports the sessions of other agents' stores (package
// migrate's Sources) into a pi store. It remembers where each session
// went, so that a session imported after its parent names the parent's
// file, across the stores of one run. It is not safe for concurrent use.
type Importer struct {
	opts  Options
	paths map[string]string // source + "\x00" + source id -> target file
}

// New returns an Importer.
func New(opts Options) *Importer {
	return &Importer{opts: opts, paths: map[string]string{}}
}

// Store imports every session of the store of src at path, telling h
// about each session, skip, damage and failure as it goes.
func (im *Importer) Store(ctx context.Context, src migrate.Source, path string, h Handler) {
	st, err := src.Open(ctx, path, im.opts.Import)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			h.fail(fmt.Errorf("%s store %s: %w", src.Title(), path, err))
		} else {
			h.fail(fmt.Errorf("open %s store %s: %w", src.Title(), path, err))
		}
		return
	}
	defer func() {
		if err := st.Close(); err != nil && h.Warn != nil {
			h.Warn(fmt.Errorf("close %s store %s: %w", src.Title(), path, err))
		}
	}()
	for ref, err := range st.Sessions(ctx) {
		if err != nil {
			if !h.damage(err) {
				h.fail(err)
			}
			continue
		}
		conv, err := st.Convert(ctx, ref)
		if errors.Is(err, vfs.ErrNotRegular) {
			// A named pipe or device with a session's name: skipped and
			// reported like a damaged file, never waited on.
			err = &migrate.Damage{Path: ref.Path, Err: vfs.ErrNotRegular}
		}
		if err != nil {
			if !h.damage(err) {
				h.fail(fmt.Errorf("import %s session %s from %s: %w", src.Title(), ref.ID, ref.Path, err))
			}
			continue
		}
		for _, d := range conv.Damage {
			h.damage(d)
		}
		for _, s := range conv.Sessions {
			r := im.Write(ctx, s)
			if h.Session != nil {
				h.Session(r)
			}
			if err := s.Close(); err != nil && h.Warn != nil {
				h.Warn(fmt.Errorf("import %s session %s: %w", src.Title(), s.SourceID, err))
			}
		}
		for _, sk := range conv.Skipped {
			if h.Skip != nil {
				h.Skip(src.Name(), sk)
			}
		}
	}
}

func (h Handler) fail(err error) {
	if h.Fail != nil {
		h.Fail(err)
	}
}

// damage reports err to h when it is damaged source data.
func (h Handler) damage(err error) bool {
	var d *migrate.Damage
	if !errors.As(err, &d) {
		return false
	}
	if h.Damage != nil {
		h.Damage(d)
	}
	return true
}

// Target returns the file an imported session goes to: the existing file
// with its id in its working directory's session directory, or a new
// "<start>_<id>.jsonl" there.
func (im *Importer) Target(s *migrate.Imported) string {
	dir := layout.DefaultSessionDir(im.opts.AgentDir, s.Cwd)
	if ents, err := im.fs().ReadDir(dir); err == nil {
		suffix := "_" + s.ID + ".jsonl"
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), suffix) {
				return filepath.Join(dir, e.Name())
			}
		}
	}
	return filepath.Join(dir, s.FileName())
}

// Write writes one imported session to its Target under the session's
// writer lock, replacing an earlier import of it but never a file that
// changed since (migrate.CheckReplace); in a dry run it only compares.
func (im *Importer) Write(ctx context.Context, s *migrate.Imported) Result {
	path := im.Target(s)
	parent := ""
	if s.ParentSourceID != "" {
		parent = im.paths[s.Source+"\x00"+s.ParentSourceID]
	}
	r := Result{Session: s, Path: path, Parent: parent}
	// The session is written as it is read from where its conversion
	// keeps it, and the current file is compared and checked as it is
	// read: neither is held in memory, however large.
	write := func(w io.Writer) error { return s.Write(w, parent) }
	check := func(cur io.Reader) error {
		if err := migrate.CheckReplaceFrom(cur, s.ID); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	status := map[sessionfile.WriteResult]string{sessionfile.WriteCreated: StatusNew, sessionfile.WriteReplaced: StatusUpdated, sessionfile.WriteUnchanged: StatusUnchanged}
	var res sessionfile.WriteResult
	var err error
	if im.opts.DryRun {
		res, err = sessionfile.CompareFile(im.fs(), path, write, check)
	} else {
		res, err = sessionfile.WriteWholeFrom(ctx, path, write, check, sessionfile.WriteOptions{Lock: sessionfile.LockOptions{Mode: "import", Command: im.opts.Command, FS: im.fs()}})
	}
	if err == nil {
		r.Status = status[res]
	}
	switch {
	case err == nil:
	case errors.Is(err, migrate.ErrNotImported):
		r.Status, r.Err = StatusKept, err
	default:
		r.Status, r.Err = StatusFailed, err
	}
	im.paths[s.Source+"\x00"+s.SourceID] = path
	return r
}
