package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/replica"
)

// remoteFlags are list's and show's --remote and --age-identity: a
// remote read without a local store.
type remoteFlags struct {
	remote, identity *string
}

func addRemoteFlags(fs *flag.FlagSet) remoteFlags {
	return remoteFlags{
		remote:   fs.String("remote", "", "read the sessions of the sync remote `REMOTE` (s3://BUCKET/PREFIX or a directory) instead of a local store"),
		identity: fs.String("age-identity", "", "with --remote: decrypt an encrypted remote with the age identity in `FILE`"),
	}
}

// open opens the remote, configured as sync's (AWS_* variables).
func (rf remoteFlags) open() (*replica.Remote, error) {
	opts := replica.Options{Remote: *rf.remote, Backends: remoteBackends()}
	if *rf.identity != "" {
		if err := opts.LoadIdentity(*rf.identity); err != nil {
			return nil, err
		}
	}
	return replica.Open(opts)
}

// runListRemote lists the pi sessions a remote holds, as list does a
// store's: the same table and JSON, from each session's newest manifest
// (no segment is read, but for manifests an earlier sessctl wrote, whose
// header is). path is the session's name on the remote.
func runListRemote(e *env, rf remoteFlags, asJSON bool) int {
	r, err := rf.open()
	if err != nil {
		return e.failRemote(err)
	}
	defer r.Close()
	ss, err := r.Sessions(e.ctx)
	if err != nil {
		return e.fail(err)
	}
	infos, failed := replica.PiInfos(ss)
	for _, s := range failed {
		fmt.Fprintf(e.stderr, "sessctl: list: %s %s: %v\n", s.Kind, human.QuotePath(s.Name), s.Err)
	}
	skipped := len(failed) // the listing may miss them: a failure
	return writeList(e, render.Rows(infos), engine.ListOptions{}, asJSON, &skipped)
}

// openRemoteView reads the pi session name stands for from the remote
// into a private temporary file (streamed, a segment at a time) and opens
// it read-only, as openView opens a local one; close removes the file.
func openRemoteView(e *env, rf remoteFlags, name string) (*render.Session, func(), error) {
	r, err := rf.open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	dir, err := os.MkdirTemp("", "sessctl-remote-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	path, refused, err := r.ReadSessionFile(e.ctx, name, dir)
	for _, l := range refused {
		fmt.Fprintf(e.stderr, "sessctl: %s: refused remote %s\n", e.name, l)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	sv, err := render.Open(e.ctx, path, false)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	e.warnVersion(sv.Path, sv.Header.Entry)
	return sv, func() { _ = sv.Close(); cleanup() }, nil
}

// failRemote reports an error opening a remote: a malformed one is a
// usage mistake.
func (e *env) failRemote(err error) int {
	if errors.Is(err, replica.ErrBadRemote) {
		return e.usageError("%v", err)
	}
	return e.fail(err)
}
