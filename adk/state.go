package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
	"google.golang.org/adk/v2/session"
)

// stateStore keeps ADK's app: and user: state, which is shared by the
// sessions of an app (of one of its users), in sessctl's own directory,
// never inside a session file: <dir>/<app>/app.json and
// <dir>/<app>/users/<user>.json, each a JSON object of the keys without
// their prefix. A change is a read-modify-write under the file's lock
// (<file>.lock) ending in an atomic replace, so that two processes
// merging deltas lose neither's keys and a crash leaves the old or the
// new object, never a part.
type stateStore struct {
	fs      vfs.FS
	dir     string
	command string

	mu    sync.Mutex
	files map[string]*sync.Mutex // a mutex per lock file, see inProcess
}

// inProcess takes this process's mutex of a lock file and returns its
// unlock: the goroutines of one process queue on it before they take the
// file's lock, instead of polling that lock against each other.
func (s *stateStore) inProcess(lockPath string) (unlock func()) {
	s.mu.Lock()
	if s.files == nil {
		s.files = map[string]*sync.Mutex{}
	}
	m := s.files[lockPath]
	if m == nil {
		m = new(sync.Mutex)
		s.files[lockPath] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

func (s *stateStore) path(app, user string) string {
	if user == "" {
		return filepath.Join(s.dir, escapeName(app), "app.json")
	}
	return filepath.Join(s.dir, escapeName(app), "users", escapeName(user)+".json")
}

// read returns the state of an app (user "") or of one of its users;
// a missing file is an empty state.
func (s *stateStore) read(app, user string) (map[string]any, error) {
	p := s.path(app, user)
	data, err := vfs.ReadFile(s.fs, p)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read adk state %s: %w", p, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read adk state %s: %w", p, err)
	}
	return m, nil
}

// update merges delta into the state of an app (user "") or of one of
// its users, under the file's lock, and returns the state.
func (s *stateStore) update(ctx context.Context, app, user string, delta map[string]any) (map[string]any, error) {
	p := s.path(app, user)
	if len(delta) == 0 {
		return s.read(app, user)
	}
	unlock := s.inProcess(p + ".lock")
	defer unlock()
	l, err := lock.Acquire(ctx, p+".lock", lock.Options{Wait: true, Mode: "adk-state", Command: s.command})
	if err != nil {
		return nil, fmt.Errorf("update adk state %s: %w", p, err)
	}
	defer l.Close()
	m, err := s.read(app, user)
	if err != nil {
		return nil, err
	}
	maps.Copy(m, delta)
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("update adk state %s: %w", p, err)
	}
	if err := vfs.MkdirAllSync(s.fs, filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("update adk state %s: %w", p, err)
	}
	if err := vfs.WriteFileAtomic(s.fs, p, data, 0o600); err != nil {
		return nil, fmt.Errorf("update adk state %s: %w", p, err)
	}
	return m, nil
}

// splitState splits a state (or a state delta) by ADK's prefixes into the
// app's keys, the user's keys (prefixes removed) and the session's;
// temp: keys are dropped, as ADK drops them.
func splitState(m map[string]any) (app, user, sess map[string]any) {
	app, user, sess = map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, session.KeyPrefixApp):
			app[strings.TrimPrefix(k, session.KeyPrefixApp)] = v
		case strings.HasPrefix(k, session.KeyPrefixUser):
			user[strings.TrimPrefix(k, session.KeyPrefixUser)] = v
		case strings.HasPrefix(k, session.KeyPrefixTemp):
		default:
			sess[k] = v
		}
	}
	return app, user, sess
}

// mergeState is the state a session shows: its own keys, the app's
// under app: and the user's under user:.
func mergeState(app, user, sess map[string]any) map[string]any {
	m := make(map[string]any, len(app)+len(user)+len(sess))
	maps.Copy(m, sess)
	for k, v := range app {
		m[session.KeyPrefixApp+k] = v
	}
	for k, v := range user {
		m[session.KeyPrefixUser+k] = v
	}
	return m
}
