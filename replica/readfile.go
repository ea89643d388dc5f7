package replica

import (
	"context"
	"os"
	"path/filepath"
)

// ReadSessionFile writes the JSONL session the remote holds under name
// (as ReadSession reads it, streamed) into a new private file in the
// directory dir, named as the session's file, and returns its path and
// the lines left out. On an error nothing is left in dir.
func (r *Remote) ReadSessionFile(ctx context.Context, name, dir string) (string, []RefusedLine, error) {
	fsys := r.opts.fs()
	tmp := filepath.Join(dir, "session.jsonl")
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, err
	}
	got, refused, err := r.ReadSession(ctx, name, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, got)
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return "", refused, err
	}
	return path, refused, nil
}
