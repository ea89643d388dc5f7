package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
)

// forkFrom copies every entry of the session file at sourcePath (all
// branches, labels and names, in file order) into a new session for
// targetCwd ("": the source header's cwd), whose header names the source
// as parentSession exactly as passed (pi's forkFrom). The new file goes
// into dirFor(the new session's cwd) and is written at once. The returned session is open for
// writing on it, with cwd targetCwd.
//
// Unlike pi, a version 1 or 2 source is migrated (in memory, the source is
// not touched) before it is copied, so the fork is a valid version 3 file
// instead of id-less entries under a version 3 header. A source of a newer
// version than CurrentVersion is refused with a *VersionError
// (ErrUnsupportedVersion).
func forkFrom(ctx context.Context, sourcePath, targetCwd string, opts options, dirFor func(cwd string) string) (*Session, error) {
	fsys := opts.fs()
	data, err := fsys.ReadFile(sourcePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, errs.NotFound("session file "+sourcePath))
	}
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	p := jsonl.ParseFile(data)
	if len(p.Entries) == 0 {
		return nil, &CorruptError{Path: sourcePath, Err: errors.New("cannot fork: source session file is empty or invalid")}
	}
	if err := checkHeader(sourcePath, p); err != nil {
		return nil, err
	}
	entries := p.Entries
	v := migrate.VersionOf(&entries[0])
	if v > CurrentVersion {
		// Copying entries of a format this code does not know under a
		// version 3 header would silently change their meaning.
		return nil, &VersionError{Path: sourcePath, Found: v, Max: CurrentVersion}
	}
	if migrate.Needed(v) {
		if entries, _, err = migrate.Entries(entries); err != nil {
			return nil, &CorruptError{Path: sourcePath, Err: err}
		}
	}
	if targetCwd == "" {
		// The source's cwd, as the header gives it (pi falls back to the
		// process working directory).
		targetCwd = processCwd()
		if h := jsonl.ParseHeader(entries[0]); h.HasCwd {
			targetCwd = h.Cwd
		}
	}
	opts.Dir = dirFor(targetCwd)
	dir, err := opts.sessionDir()
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	targetCwd = layout.ResolvePath(targetCwd)
	s := &Session{opts: opts, cwd: targetCwd, dir: dir, persist: true}
	id := opts.sessionID()
	if err := layout.CheckName(id); err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	now := opts.now()
	parent := sourcePath
	header := jsonl.NewHeaderLine(id, now, targetCwd, &parent)
	file := filepath.Join(dir, layout.SessionFileName(now, id))
	if err := s.switchFile(ctx, file); err != nil {
		return nil, err
	}
	h, _ := jsonl.ParseEntry(header)
	body := make([]Entry, 0, len(entries))
	body = append(body, h)
	for _, e := range entries[1:] {
		if !e.IsHeader() {
			body = append(body, e)
		}
	}
	s.index(body)
	if err := s.createFile(nil); err != nil {
		_ = s.closeFile()
		return nil, err
	}
	return s, nil
}
