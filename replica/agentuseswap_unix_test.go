//go:build unix

package replica_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
)

// swapFS replaces a session directory's message.json by a symbolic link
// to a secret just before the push reads it: after the listing, as an
// attacker racing the push would.
type swapFS struct {
	vfs.FS
	secret string
	once   sync.Once
}

func (s *swapFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 && strings.HasSuffix(name, "message.json") {
		s.once.Do(func() {
			_ = os.Remove(name)
			_ = os.Symlink(s.secret, name)
		})
	}
	return s.FS.OpenFile(name, flag, perm)
}

// A member of an AgentUse session swapped for a symbolic link between
// the listing and the read is refused, and what it points at is never
// uploaded.
func TestAgentUsePushRefusesSwappedLink(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := auMachine(t, be, remote)
	ctx := context.Background()
	auSession(t, a)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(`{"secret":"do-not-upload-me"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a.opts.FS = &swapFS{FS: vfs.OS(), secret: secret}
	rep, err := a.remote(t).Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, s := range rep.Sessions {
		failed = failed || s.Err != nil
	}
	if !failed {
		t.Fatalf("the push of a session whose member became a link reported no error: %+v", rep.Sessions)
	}
	// The remote is a directory: nothing in it holds the secret (the
	// objects are stored as written: no encryption was asked for).
	dir := strings.TrimPrefix(remote, "file://")
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "do-not-upload-me") {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
}
