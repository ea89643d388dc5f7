package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/migrate"
)

// forkBranch writes a new session file holding the root-to-leafID path of
// this session, built exactly as CreateBranchedSession builds it (label
// entries dropped and re-created for the labels whose targets are on the
// path, parentSession naming this session's file), and returns the new
// session, open for writing with its lock held, with cwd ("": this
// session's) in dir ("": this session's directory). opts are the new
// session's options. This session is not changed, so it may be open
// read-only.
//
// Unlike CreateBranchedSession, which waits for an assistant message as pi
// does, forkBranch writes the new file at once: a fork is meant to be
// found on disk. A session file of a newer version than CurrentVersion
// (opened read-only) is refused with a *VersionError.
func (s *Session) forkBranch(ctx context.Context, leafID, cwd, dir string, opts options) (*Session, error) {
	opts.ReadOnly, opts.Cwd, opts.create = false, "", false
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if !s.persist {
		return nil, errors.New("fork branch: the session is in memory; it has no file to name as parent")
	}
	if v := migrate.VersionOf(&s.header); v > CurrentVersion {
		// A read-only open reads a newer file as best it can; writing its
		// entries under a version 3 header would change their meaning.
		return nil, &VersionError{Path: s.file, Found: v, Max: CurrentVersion}
	}
	if cwd == "" {
		cwd = s.cwd
	}
	if dir == "" {
		dir = s.dir
	} else {
		opts.Dir = dir
		d, err := opts.sessionDir()
		if err != nil {
			return nil, fmt.Errorf("fork branch: %w", err)
		}
		dir = d
	}
	opts.Dir = dir
	// The new session starts as a copy of this one's state and lets
	// CreateBranchedSession replace it: that builds the branched index
	// from the shared (read-only here) index, takes the new file's lock
	// and switches to it. s.mu is held, so the index cannot change.
	ns := &Session{opts: opts, cwd: cwd, dir: dir, file: s.file, persist: true, header: s.header, ix: s.ix}
	file, err := ns.CreateBranchedSession(ctx, leafID)
	if err != nil {
		_ = ns.Close()
		return nil, err
	}
	ns.mu.Lock()
	if !ns.onDisk {
		err = ns.createFile(nil)
	}
	ns.mu.Unlock()
	if err != nil {
		_ = ns.Close()
		return nil, fmt.Errorf("fork branch to %s: %w", filepath.Base(file), err)
	}
	return ns, nil
}
