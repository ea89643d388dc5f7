package replica

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Backend opens the Client of a remote of one URL scheme, given the
// whole remote ("s3://bucket/prefix"): package replica/s3's Backend is
// the one for s3://. Remotes of a scheme with no Backend in
// Options.Backends are ErrBadRemote; directories need none.
type Backend func(remote string) (Client, error)

// ErrBadRemote is returned for a remote that is neither
// s3://bucket[/prefix] nor a directory.
var ErrBadRemote = errors.New("the remote must be s3://bucket/prefix, or a directory: file:///path, /path or ./path")

// newClient makes the Client of a remote: one of a scheme backends has
// (s3://bucket/prefix), or a directory. It picks by the scheme alone and
// imports no backend: the caller passes them.
func newClient(remote string, backends map[string]Backend, fsys vfs.FS) (Client, error) {
	if scheme, _, ok := strings.Cut(remote, "://"); ok && scheme != "file" {
		if open := backends[scheme]; open != nil {
			return open(remote)
		}
		return nil, fmt.Errorf("open remote %q: no backend for %s:// (Options.Backends): %w", remote, scheme, ErrBadRemote)
	}
	dir, err := remoteDir(remote)
	if err != nil {
		return nil, err
	}
	return NewDirClient(dir, fsys)
}

// remoteDir returns the directory a remote names: a file:// URL (of this
// host), an absolute path, or a path relative to the working directory
// that says so (./dir, ../dir). A bare relative name ("bucket/prefix")
// is refused: it is more likely an S3 remote without its scheme.
func remoteDir(remote string) (string, error) {
	if strings.HasPrefix(remote, "file:") {
		u, err := url.Parse(remote)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			return "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
		}
		p := u.Path
		if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
			p = p[1:] // file:///C:/dir
		}
		return filepath.FromSlash(p), nil
	}
	rel := remote == "." || remote == ".."
	for _, s := range []string{"./", "../", "." + string(filepath.Separator), ".." + string(filepath.Separator)} {
		rel = rel || strings.HasPrefix(remote, s)
	}
	if filepath.IsAbs(remote) || rel {
		return remote, nil
	}
	return "", fmt.Errorf("parse remote %q: %w", remote, ErrBadRemote)
}
