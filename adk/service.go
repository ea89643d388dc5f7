package adk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
	"github.com/sessctl/sessctl/message"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
)

// Options configure New.
type Options struct {
	// Store is the sessctl store the sessions are kept in. A session of
	// app A and user U is a pi session file in <store dir>/<A>/<U>/
	// (names escaped: lower-case letters, digits, '-' and '_' stay, other
	// bytes become %XX), where <store dir> is Store.Dir, or for an agent's
	// store its <agentDir>/sessions. Its sync policy, clock, ids, file
	// system and cache directory are the Service's.
	Store engine.StoreOptions
	// StateDir is where the app: and user: state is kept, shared by the
	// sessions of an app and of a user. "" means
	// <sessctl cache dir>/adk-state/<the store directory, encoded as pi
	// encodes a cwd>. It is state, not a cache: point it somewhere kept
	// when the cache directory is cleaned.
	StateDir string
	// Cwd is written as the cwd of new sessions' headers (pi starts in
	// it when it resumes one); "" is the process working directory.
	Cwd string
	// MaxWriters bounds the writers the Service holds open (each a file
	// and its lock): past it, opening another closes the one least
	// recently used. 0 means 64.
	MaxWriters int
	// ReleaseIdle, when positive, releases a session's writer once no
	// call has used it for that long, so that other processes serving
	// the same sessions (replicas behind a load balancer) take turns
	// without waiting for this one to close. 0 holds it until Delete,
	// Release, Close or MaxWriters.
	ReleaseIdle time.Duration
	// API and Provider are written in the assistant messages model events
	// become ("google-generative-ai" and "google" by default), Model where
	// an event has no ModelVersion ("" means "adk").
	API, Provider, Model string
}

// Service is a session.Service of ADK on sessctl: every session is an
// ordinary pi session file, which pi opens with the conversation as its
// context and the sessctl CLI shows, forks and branches.
//
// The Service holds each session's writer lock from its Create or first
// AppendEvent until Delete, Release or Close (or until it is the least
// recently used of more than Options.MaxWriters, or idle for
// Options.ReleaseIdle), so one process appends to it at a time. Another process's AppendEvent on the same session waits
// for the lock (until its context is done) instead of failing; its events
// then follow those of the holder, none lost: Get reads the file, not a
// copy. It is safe for concurrent use.
type Service struct {
	o     Options
	root  string
	fs    vfs.FS
	state *stateStore
	names piNames

	mu      sync.Mutex
	stores  map[string]*engine.Store
	writers map[key]*writer
	paths   map[key]string
	uses    uint64
	closed  bool
}

var _ session.Service = (*Service)(nil)

type key struct{ app, user, id string }

// writer is a session's open writer; mu is held around each append.
type writer struct {
	mu    sync.Mutex
	s     *engine.Session
	gone  bool        // removed from the Service's map: look it up again
	used  uint64      // the Service's use counter at its last use (under Service.mu)
	timer *time.Timer // Options.ReleaseIdle's (under Service.mu)
}

// New returns a Service keeping its sessions in the store o names.
func New(ctx context.Context, o Options) (*Service, error) {
	st, err := engine.OpenStore(ctx, o.Store)
	if err != nil {
		return nil, fmt.Errorf("open adk service: %w", err)
	}
	root := st.Dir()
	stateDir := o.StateDir
	if stateDir == "" {
		cache, err := layout.CacheDir()
		if err != nil {
			return nil, fmt.Errorf("open adk service: state directory: %w", err)
		}
		stateDir = filepath.Join(cache, "adk-state", layout.CwdDirName(root))
	}
	if o.Cwd == "" {
		if o.Cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("open adk service: %w", err)
		}
	}
	fsys := o.Store.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	names := piNames{api: o.API, provider: o.Provider, model: o.Model}
	if names.api == "" {
		names.api = "google-generative-ai"
	}
	if names.provider == "" {
		names.provider = "google"
	}
	if names.model == "" {
		names.model = "adk"
	}
	return &Service{
		o: o, root: root, fs: fsys, names: names,
		state:   &stateStore{fs: fsys, dir: stateDir, command: o.Store.Command},
		stores:  map[string]*engine.Store{},
		writers: map[key]*writer{},
		paths:   map[key]string{},
	}, nil
}

func (s *Service) appDir(app string) string { return filepath.Join(s.root, escapeName(app)) }

func (s *Service) userDir(app, user string) string {
	return filepath.Join(s.root, escapeName(app), escapeName(user))
}

// store returns the engine store of one directory of sessions.
func (s *Service) store(ctx context.Context, dir string) (*engine.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[dir]; ok {
		return st, nil
	}
	o := s.o.Store
	o.Dir = dir
	st, err := engine.OpenStore(ctx, o)
	if err != nil {
		return nil, err
	}
	s.stores[dir] = st
	return st, nil
}

func (s *Service) now() time.Time {
	if s.o.Store.Now != nil {
		return s.o.Store.Now()
	}
	return time.Now()
}

func (s *Service) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return engine.ErrClosed
	}
	return nil
}

// find returns the path of a session's file: <timestamp>_<id>.jsonl in
// its user's directory.
func (s *Service) find(k key) (string, error) {
	s.mu.Lock()
	p, ok := s.paths[k]
	s.mu.Unlock()
	if ok {
		if _, err := s.fs.Lstat(p); err == nil {
			return p, nil
		}
		s.mu.Lock()
		delete(s.paths, k)
		s.mu.Unlock()
	}
	dir := s.userDir(k.app, k.user)
	ents, err := s.fs.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("find adk session %s: %w", k.id, err)
	}
	for _, d := range ents {
		if !d.Type().IsRegular() || !layout.IsSessionFileName(d.Name()) || idFromName(d.Name()) != k.id {
			continue
		}
		p := filepath.Join(dir, d.Name())
		s.mu.Lock()
		s.paths[k] = p
		s.mu.Unlock()
		return p, nil
	}
	return "", fmt.Errorf("adk session %q of app %q, user %q: %w", k.id, k.app, k.user, engine.ErrNotFound)
}

// idFromName returns the session id a session file's name holds
// (<timestamp>_<id>.jsonl; pi's timestamps hold no '_').
func idFromName(name string) string {
	name = strings.TrimSuffix(name, ".jsonl")
	if i := strings.IndexByte(name, '_'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// Create starts a session, its file written and synced before Create
// returns: a header, then a custom entry naming its app and user with the
// session keys of req.State. The app: and user: keys of req.State go to
// the shared state, temp: keys nowhere. A session id the caller gives
// must be 1 to 128 letters, digits, '-', '_' or '.', not starting with '.'.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("create adk session: app name and user id are required, got %q and %q", req.AppName, req.UserID)
	}
	id := req.SessionID
	if id != "" {
		if err := checkSessionID(id); err != nil {
			return nil, fmt.Errorf("create adk session: %w", err)
		}
	}
	dir := s.userDir(req.AppName, req.UserID)
	st, err := s.store(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("create adk session: %w", err)
	}
	if id != "" {
		// Two processes creating one id: the second must see the first's
		// file, so the look and the creation are one step under a lock of
		// the user's (in the state directory, not among the sessions). A
		// drawn id (a UUID) needs none.
		unlock := s.state.inProcess(filepath.Join(s.state.dir, escapeName(req.AppName), "users", escapeName(req.UserID)+".create.lock"))
		defer unlock()
		l, err := lock.Acquire(ctx, filepath.Join(s.state.dir, escapeName(req.AppName), "users", escapeName(req.UserID)+".create.lock"),
			lock.Options{Wait: true, Mode: "adk-create", Command: s.o.Store.Command})
		if err != nil {
			return nil, fmt.Errorf("create adk session: %w", err)
		}
		defer l.Close()
		if _, err := s.find(key{req.AppName, req.UserID, id}); err == nil {
			return nil, fmt.Errorf("create adk session %q of app %q, user %q: %w", id, req.AppName, req.UserID, fs.ErrExist)
		} else if !errors.Is(err, engine.ErrNotFound) {
			return nil, fmt.Errorf("create adk session: %w", err)
		}
	}
	appDelta, userDelta, sess := splitState(req.State)
	es, err := st.Create(ctx, s.o.Cwd, engine.CreateOptions{ID: id, WriteAtOnce: true})
	if err != nil {
		return nil, fmt.Errorf("create adk session: %w", err)
	}
	if _, err := es.AppendCustomEntry(customSession, sessionRecord{AppName: req.AppName, UserID: req.UserID, State: sess}); err != nil {
		es.Close()
		return nil, fmt.Errorf("create adk session: %w", err)
	}
	id = es.SessionID()
	k := key{req.AppName, req.UserID, id}
	s.mu.Lock()
	s.paths[k] = es.SessionFile()
	s.uses++
	w := &writer{s: es, used: s.uses}
	s.writers[k] = w
	evict := s.leastUsed(w)
	s.mu.Unlock()
	if evict != (key{}) {
		_ = s.release(evict)
	}
	s.idle(k, w)
	appState, err := s.state.update(ctx, req.AppName, "", appDelta)
	if err != nil {
		return nil, fmt.Errorf("create adk session %s: %w", id, err)
	}
	userState, err := s.state.update(ctx, req.AppName, req.UserID, userDelta)
	if err != nil {
		return nil, fmt.Errorf("create adk session %s: %w", id, err)
	}
	return &session.CreateResponse{Session: &localSession{
		app: req.AppName, user: req.UserID, id: id,
		state:   mergeState(appState, userState, sess),
		updated: headerTime(es.Header()),
	}}, nil
}

// read reads a session's file: its record and the events ADK appended.
func (s *Service) read(ctx context.Context, k key) (*sessionRecord, []*session.Event, time.Time, error) {
	path, err := s.find(k)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	st, err := s.store(ctx, s.userDir(k.app, k.user))
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	v, err := st.View(ctx, path)
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("read adk session %s: %w", k.id, err)
	}
	defer v.Close()
	rec, evs, err := readEvents(v.Lines(v.BranchPath("")))
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("read adk session %s: %w", path, err)
	}
	if rec == nil {
		return nil, nil, time.Time{}, fmt.Errorf("read adk session %s: no %s entry: not a session of the adk adapter: %w", path, customSession, engine.ErrNotFound)
	}
	updated := headerTime(v.Header())
	if n := len(evs); n > 0 && evs[n-1].Timestamp.After(updated) {
		updated = evs[n-1].Timestamp
	}
	return rec, evs, updated, nil
}

// readEvents returns the record and the events of a session's branch
// (the root-to-leaf path, which is every entry the adapter appended until
// someone branches the session with pi or sessctl), in order.
func readEvents(entries iter.Seq2[*engine.Entry, error]) (*sessionRecord, []*session.Event, error) {
	var rec *sessionRecord
	var evs []*session.Event
	var pending []message.Message
	var pendingID string
	for e, err := range entries {
		if err != nil {
			return nil, nil, err
		}
		switch e.Type {
		case "custom":
			var ct string
			if raw, ok := e.Field("customType"); !ok || json.Unmarshal(raw, &ct) != nil {
				continue
			}
			data, _ := e.Field("data")
			switch ct {
			case customSession:
				if rec == nil {
					rec = new(sessionRecord)
					if err := json.Unmarshal(data, rec); err != nil {
						return nil, nil, fmt.Errorf("line %d: %w", e.Line, err)
					}
				}
			case customEvent:
				ev := new(session.Event)
				if err := json.Unmarshal(data, ev); err != nil {
					return nil, nil, fmt.Errorf("line %d: %w", e.Line, err)
				}
				evs = append(evs, ev)
			}
		case "message":
			raw := bytes.Clone(e.Message()) // valid until the loop goes on
			if raw == nil {
				continue
			}
			m, err := message.Decode(raw)
			if err != nil {
				continue
			}
			if part, ok := extraOf(m, memberPart); ok {
				var id string
				_ = json.Unmarshal(part, &id)
				if id != pendingID {
					pending, pendingID = nil, id
				}
				pending = append(pending, m)
				continue
			}
			full, ok := extraOf(m, memberEvent)
			if !ok {
				// A message pi (or another program) added: the session was
				// continued there. It is an event of its own.
				if ev := foreignEvent(e.ID, m); ev != nil {
					evs = append(evs, ev)
				}
				pending, pendingID = nil, ""
				continue
			}
			ev := new(session.Event)
			if err := json.Unmarshal(full, ev); err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", e.Line, err)
			}
			if ev.Content == nil {
				msgs := []message.Message{m}
				if pendingID == ev.ID {
					msgs = append(pending, m)
				}
				if ev.Content, err = messagesContent(msgs); err != nil {
					return nil, nil, fmt.Errorf("line %d: %w", e.Line, err)
				}
			}
			pending, pendingID = nil, ""
			evs = append(evs, ev)
		}
	}
	return rec, evs, nil
}

// foreignEvent returns the event a message the adapter did not write
// stands for (pi's user, assistant and tool result messages: a session
// continued in pi), or nil for one it cannot map. Its id is "pi-" and the
// entry's id, its invocation "pi", its author "user" for a user or tool
// result message and "pi" for an assistant's.
func foreignEvent(entryID string, m message.Message) *session.Event {
	var ms int64
	author := "user"
	switch m := m.(type) {
	case *message.User:
		ms = m.Timestamp
	case *message.ToolResult:
		ms = m.Timestamp
	case *message.Assistant:
		ms, author = m.Timestamp, "pi"
	default:
		return nil
	}
	c, err := messagesContent([]message.Message{m})
	if err != nil || len(c.Parts) == 0 {
		return nil
	}
	return &session.Event{
		ID: "pi-" + entryID, InvocationID: "pi", Author: author,
		Timestamp:   time.UnixMilli(ms).UTC(),
		Actions:     session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}},
		LLMResponse: model.LLMResponse{Content: c, TurnComplete: true},
	}
}

// sessionState folds a session's state: the state it was created with,
// then each event's delta (its session keys).
func sessionState(rec *sessionRecord, evs []*session.Event) map[string]any {
	st := maps.Clone(rec.State)
	if st == nil {
		st = map[string]any{}
	}
	for _, ev := range evs {
		_, _, sess := splitState(ev.Actions.StateDelta)
		maps.Copy(st, sess)
	}
	return st
}

// merged returns the state a session of app and user shows.
func (s *Service) merged(app, user string, sess map[string]any) (map[string]any, error) {
	appState, err := s.state.read(app, "")
	if err != nil {
		return nil, err
	}
	userState, err := s.state.read(app, user)
	if err != nil {
		return nil, err
	}
	return mergeState(appState, userState, sess), nil
}

// Get reads a session from its file: the events ADK appended, in order
// (those on the session's current branch, when pi or sessctl moved it)
// (the last req.NumRecentEvents of them, then those at or after
// req.After), and its state folded from their deltas with the app's and
// the user's.
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return nil, fmt.Errorf("get adk session: app name, user id and session id are required, got %q, %q and %q", req.AppName, req.UserID, req.SessionID)
	}
	k := key{req.AppName, req.UserID, req.SessionID}
	rec, evs, updated, err := s.read(ctx, k)
	if err != nil {
		return nil, err
	}
	state, err := s.merged(k.app, k.user, sessionState(rec, evs))
	if err != nil {
		return nil, fmt.Errorf("get adk session %s: %w", k.id, err)
	}
	if n := req.NumRecentEvents; n > 0 && len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	if !req.After.IsZero() {
		kept := evs[:0:0]
		for _, ev := range evs {
			if !ev.Timestamp.Before(req.After) {
				kept = append(kept, ev)
			}
		}
		evs = kept
	}
	return &session.GetResponse{Session: &localSession{
		app: k.app, user: k.user, id: k.id, state: state, events: evs, updated: updated,
	}}, nil
}

// List returns the sessions of an app's user (or of all its users when
// req.UserID is ""), newest first, from sessctl's listing, which reads the
// list index and only the files that changed since it was written. The
// sessions have no events; a session's state is read from its file when
// it is first asked for.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if req.AppName == "" {
		return nil, fmt.Errorf("list adk sessions: app name is required")
	}
	var infos []engine.Info
	var err error
	if req.UserID != "" {
		var st *engine.Store
		if st, err = s.store(ctx, s.userDir(req.AppName, req.UserID)); err == nil {
			// The user's directory, whatever cwd the sessions' headers
			// name (a Dir store lists only a cwd's sessions otherwise).
			infos, err = st.List(ctx, "adk", engine.ListOptions{NoText: true, EveryCwd: true})
		}
	} else {
		var st *engine.Store
		if st, err = s.store(ctx, s.appDir(req.AppName)); err == nil {
			infos, err = st.List(ctx, "", engine.ListOptions{NoText: true})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list adk sessions of app %q: %w", req.AppName, err)
	}
	out := make([]session.Session, 0, len(infos))
	appDir := s.appDir(req.AppName)
	for i := range infos {
		in := &infos[i]
		user := req.UserID
		if user == "" {
			d := filepath.Dir(in.Path)
			if filepath.Dir(d) != appDir {
				continue
			}
			if user, err = unescapeName(filepath.Base(d)); err != nil {
				continue
			}
		}
		id := in.ID
		if idFromName(filepath.Base(in.Path)) != id {
			continue // not a file the adapter named
		}
		k := key{req.AppName, user, id}
		out = append(out, &localSession{
			app: k.app, user: k.user, id: k.id, updated: in.Modified,
			load: func() (map[string]any, error) {
				rec, evs, _, err := s.read(context.WithoutCancel(ctx), k)
				if err != nil {
					return nil, err
				}
				return s.merged(k.app, k.user, sessionState(rec, evs))
			},
		})
	}
	return &session.ListResponse{Sessions: out}, nil
}

// Delete moves a session's file to its store's trash (.trash in the
// user's directory, where sessctl can restore it), after releasing the
// writer this Service holds; it waits for another process's writer. A
// session that does not exist is not an error.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("delete adk session: app name, user id and session id are required, got %q, %q and %q", req.AppName, req.UserID, req.SessionID)
	}
	k := key{req.AppName, req.UserID, req.SessionID}
	path, err := s.find(k)
	if errors.Is(err, engine.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.release(k); err != nil {
		return fmt.Errorf("delete adk session %s: %w", k.id, err)
	}
	st, err := s.store(ctx, s.userDir(k.app, k.user))
	if err != nil {
		return fmt.Errorf("delete adk session %s: %w", k.id, err)
	}
	if _, err := st.Trash(ctx, path, engine.TrashOptions{Wait: true}); err != nil {
		return fmt.Errorf("delete adk session %s: %w", k.id, err)
	}
	s.mu.Lock()
	delete(s.paths, k)
	s.mu.Unlock()
	return nil
}

// Release closes the writer this Service holds on a session, if any, so
// that another process can append to it; the next AppendEvent takes it
// again.
func (s *Service) Release(appName, userID, sessionID string) error {
	return s.release(key{appName, userID, sessionID})
}

func (s *Service) release(k key) error {
	s.mu.Lock()
	w := s.writers[k]
	delete(s.writers, k)
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	s.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	s.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gone = true
	if w.s == nil {
		return nil
	}
	err := w.s.Close()
	w.s = nil
	return err
}

// Close releases every writer the Service holds. It does not wait for
// calls in progress, which fail with engine.ErrClosed when they start.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	ks := make([]key, 0, len(s.writers))
	for k := range s.writers {
		ks = append(ks, k)
	}
	s.mu.Unlock()
	var errs []error
	for _, k := range ks {
		if err := s.release(k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writer returns the session's writer, opened (waiting for its lock)
// when the Service does not hold it, with w.mu held.
func (s *Service) writer(ctx context.Context, k key, path string) (*writer, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, engine.ErrClosed
		}
		w := s.writers[k]
		if w == nil {
			w = &writer{}
			s.writers[k] = w
		}
		s.uses++
		w.used = s.uses
		evict := s.leastUsed(w)
		s.mu.Unlock()
		if evict != (key{}) {
			// A writer that fails to close has nothing left to lose: its
			// appends were acknowledged when they were synced.
			_ = s.release(evict)
		}
		w.mu.Lock()
		if w.gone {
			w.mu.Unlock()
			continue
		}
		if w.s == nil {
			st, err := s.store(ctx, s.userDir(k.app, k.user))
			if err == nil {
				w.s, err = st.Open(ctx, path, engine.OpenOptions{Wait: true, Cwd: s.o.Cwd})
			}
			if err != nil {
				w.mu.Unlock()
				return nil, err
			}
		}
		return w, nil
	}
}

// idle restarts the ReleaseIdle clock of the session's writer after a
// call used it.
func (s *Service) idle(k key, w *writer) {
	d := s.o.ReleaseIdle
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.timer != nil {
		w.timer.Reset(d)
		return
	}
	w.timer = time.AfterFunc(d, func() { s.releaseIfIdle(k, w) })
}

// releaseIfIdle closes the session's writer w unless a call is using it
// (that call restarts the clock when it ends) or it was released.
func (s *Service) releaseIfIdle(k key, w *writer) {
	s.mu.Lock()
	if s.writers[k] != w || !w.mu.TryLock() {
		s.mu.Unlock()
		return
	}
	delete(s.writers, k)
	s.mu.Unlock()
	w.gone = true
	if w.s != nil {
		_ = w.s.Close() // what it wrote was synced when it was acknowledged
		w.s = nil
	}
	w.mu.Unlock()
}

// leastUsed returns the writer to close when the Service holds more
// than MaxWriters (the least recently used other than w), or the zero
// key; s.mu is held.
func (s *Service) leastUsed(w *writer) key {
	max := s.o.MaxWriters
	if max <= 0 {
		max = 64
	}
	if len(s.writers) <= max {
		return key{}
	}
	var lk key
	var lw *writer
	for k, o := range s.writers {
		if o != w && (lw == nil || o.used < lw.used) {
			lk, lw = k, o
		}
	}
	return lk
}

// AppendEvent appends an event to the session's file, as pi messages
// (and the event's own JSON) or a custom entry, synced before it returns
// under the store's default sync policy; a partial event is not kept, as
// ADK does not keep it. temp: keys of its state delta are dropped from
// what is kept; app: and user: keys go to the shared state after the
// event is written. An event without an ID gets one. When cur is a
// session this Service returned, its state and events are brought up to
// date.
func (s *Service) AppendEvent(ctx context.Context, cur session.Session, ev *session.Event) error {
	if cur == nil {
		return errors.New("append adk event: session is nil")
	}
	if ev == nil {
		return errors.New("append adk event: event is nil")
	}
	if ev.Partial {
		return nil
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	k := key{cur.AppName(), cur.UserID(), cur.ID()}
	path, err := s.find(k)
	if err != nil {
		return fmt.Errorf("append adk event: %w", err)
	}
	if ev.ID == "" {
		ev.ID = uuid.NewString()
	}
	stored := trimTemp(ev)
	msgs, full, err := eventMessages(stored, s.names, s.now())
	if err != nil {
		return fmt.Errorf("append adk event to %s: %w", path, err)
	}
	w, err := s.writer(ctx, k, path)
	if err != nil {
		return fmt.Errorf("append adk event to %s: %w", path, err)
	}
	err = appendTo(w.s, msgs, full)
	if err != nil {
		// After a failed write a session refuses further writes until it
		// is opened again: the next append opens it again.
		w.s.Close()
		w.s = nil
	}
	w.mu.Unlock()
	s.idle(k, w)
	if err != nil {
		return fmt.Errorf("append adk event %s: %w", ev.ID, err)
	}
	appDelta, userDelta, _ := splitState(stored.Actions.StateDelta)
	if _, err := s.state.update(ctx, k.app, "", appDelta); err != nil {
		return fmt.Errorf("append adk event %s: %w", ev.ID, err)
	}
	if _, err := s.state.update(ctx, k.app, k.user, userDelta); err != nil {
		return fmt.Errorf("append adk event %s: %w", ev.ID, err)
	}
	if ls, ok := cur.(*localSession); ok {
		ls.appended(ev, stored)
	}
	return nil
}

func appendTo(es *engine.Session, msgs []message.Message, full []byte) error {
	if len(msgs) == 0 {
		_, err := es.AppendCustomEntry(customEvent, json.RawMessage(full))
		return err
	}
	for _, m := range msgs {
		if _, err := es.AppendMessage(m); err != nil {
			return err
		}
	}
	return nil
}

// trimTemp returns the event as it is kept: without the temp: keys of
// its state delta (a copy when it has any).
func trimTemp(ev *session.Event) *session.Event {
	drop := false
	for k := range ev.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			drop = true
			break
		}
	}
	if !drop {
		return ev
	}
	c := *ev
	c.Actions.StateDelta = make(map[string]any, len(ev.Actions.StateDelta))
	for k, v := range ev.Actions.StateDelta {
		if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			c.Actions.StateDelta[k] = v
		}
	}
	return &c
}

// headerTime returns the time a session file's header records.
func headerTime(h engine.Header) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, h.Timestamp)
	return t
}
