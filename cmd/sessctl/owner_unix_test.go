//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/sessionfile"
)

// A write by root used to leave a root-owned 0600 lock file (and owner
// record, quarantine, new directory and session file) in a user's store,
// after which the session's owner got "permission denied" on every
// write. What sessctl makes for a session now gets the session's owner
// and group (a new session's, its directory's), and the owner can write
// afterwards. Runs as root; uid 65534 plays the user.
func TestRootWritesKeepTheSessionsOwner(t *testing.T) {
	base := asUserDir(t)
	const uid, gid = 65534, 65534
	agent, cwd := filepath.Join(base, "agent"), filepath.Join(base, "proj")
	noErr(t, os.MkdirAll(cwd, 0o755))
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	src, ids := mutSession(t, cwd)
	// The torn tail of an interrupted write, for the label to quarantine.
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	noErr(t, err)
	_, err = f.WriteString(`{"type":"message","id":"torn","parentId":null,"mes`)
	noErr(t, err)
	noErr(t, f.Close())
	noErr(t, os.Remove(sessionfile.LockPath(src))) // the store is made as the user's, by the user
	noErr(t, filepath.WalkDir(agent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
	theirs := func(t *testing.T, p string) {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			return
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uid || st.Gid != gid {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
	}

	// As root: hold the lock a moment (the owner record exists only
	// while it is held), then label and fork.
	w, err := engine.OpenFile(t.Context(), src, engine.OpenOptions{})
	noErr(t, err)
	theirs(t, sessionfile.LockPath(src))
	theirs(t, strings.TrimSuffix(sessionfile.LockPath(src), ".lock")+".owner")
	noErr(t, w.Close())
	if _, errOut, code := mutRun(t, "", "label", src, ids[0], "by root"); code != exitOK {
		t.Fatalf("label as root: exit %d\n%s", code, errOut)
	}
	torn, _ := filepath.Glob(src + ".torn-*")
	if len(torn) != 1 {
		t.Fatalf("quarantined tails: %v, want one", torn)
	}
	theirs(t, torn[0])
	other := filepath.Join(base, "other")
	noErr(t, os.Mkdir(other, 0o755))
	out, errOut, code := mutRun(t, "", "fork", "--cwd", other, src)
	if code != exitOK {
		t.Fatalf("fork as root: exit %d\n%s", code, errOut)
	}
	forked, _ := filepath.Glob(filepath.Join(agent, "sessions", "*other*", "*.jsonl"))
	if len(forked) != 1 {
		t.Fatalf("forked sessions: %v, want one (fork said %q)", forked, out)
	}
	theirs(t, filepath.Dir(forked[0]))
	theirs(t, forked[0])
	if _, err := os.Lstat(sessionfile.LockPath(forked[0])); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the fork's lock file stays after fork (%v)", err)
	}
	theirs(t, src)

	// The user writes both sessions afterwards.
	runAsNobody := asNobody(t, base)
	for _, s := range []string{src, forked[0]} {
		if _, errOut, code := runAsNobody("label", s, ids[0], "by the user"); code != exitOK {
			t.Errorf("label as the user after root wrote %s: exit %d\n%s", s, code, errOut)
		}
	}

	// A lock file an older sessctl left owned by root: the user is told
	// how to get it back.
	lk := sessionfile.LockPath(src)
	noErr(t, os.Remove(lk))
	noErr(t, os.WriteFile(lk, nil, 0o600))
	_, errOut, code = runAsNobody("label", src, ids[0], "again")
	if code != exitFailure || !strings.Contains(errOut, "permission denied") || !strings.Contains(errOut, "hint: ") ||
		!strings.Contains(errOut, "belongs to root") || !strings.Contains(errOut, "sudo chown nobody:") {
		t.Errorf("label as the user with a root-owned lock file: exit %d, want %d and a hint\n%s", code, exitFailure, errOut)
	}
}
