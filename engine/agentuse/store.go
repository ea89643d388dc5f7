package agentuse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// The statuses of a session (SetStatus).
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusError     = "error"
	StatusSuspended = "suspended"
)

// StoreOptions configure an AgentUse store. The zero value is the
// project of the process's working directory in the XDG data root, with
// fsync on every write, the real filesystem, clock and ULIDs.
type StoreOptions struct {
	// Dir is the store: the session directory of a project
	// (<data>/agentuse/project/<hash>/session), or any directory used as
	// one. When set, DataDir, StateRoot and Git are not used.
	Dir string
	// DataDir is the data root; "" resolves it from the environment
	// (layout.AgentUseDataDir).
	DataDir string
	// StateRoot is the project's state root; "" means the working
	// directory. Its git top level, or else its absolute path, is hashed.
	StateRoot string
	// Git finds the git top level; nil runs git (layout.GitShowTopLevel).
	Git layout.GitTopLevel

	// Sync is the durability policy for every file written.
	Sync SyncPolicy
	// Wait makes every call that takes a session's writer lock (Create,
	// Open, CreateSubagent, StopSessionTree, WriteFiles) wait for it until
	// its context is done, instead of failing with ErrLocked.
	Wait bool
	// LockMode and Command are recorded in the lock's owner record,
	// which another writer's LockedError shows.
	LockMode string
	Command  string

	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID returns session, message, part and artifact ids; nil means
	// ULIDs for the current clock. Every id must be a ULID
	// (layout.IsAgentUseID).
	NewID func() string
}

// Store is the session directory of one AgentUse project. Its methods
// are safe for concurrent use.
type Store struct {
	root string
	opts StoreOptions

	mu     sync.Mutex
	closed bool
	open   map[*Session]struct{} // the sessions opened and not yet closed
}

// OpenStore resolves the session directory of a project as AgentUse
// does, or takes StoreOptions.Dir. It runs git, so it takes a context.
// Nothing is created: writers create directories as they need them.
func OpenStore(ctx context.Context, o StoreOptions) (*Store, error) {
	root := o.Dir
	if root == "" {
		data := o.DataDir
		if data == "" {
			var err error
			if data, err = layout.AgentUseDataDir(); err != nil {
				return nil, err
			}
		}
		stateRoot := o.StateRoot
		if stateRoot == "" {
			stateRoot = "."
		}
		git := o.Git
		if git == nil {
			git = layout.GitShowTopLevel
		}
		src, err := layout.AgentUseHashSource(ctx, stateRoot, git)
		if err != nil {
			return nil, err
		}
		root = layout.AgentUseSessionRoot(data, layout.AgentUseProjectHash(src))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve session root %s: %w", root, err)
	}
	return &Store{root: abs, opts: o, open: map[*Session]struct{}{}}, nil
}

// Dir returns the store's directory (absolute).
func (s *Store) Dir() string { return s.root }

// Close closes the sessions opened from the store that are still open,
// releasing their writer locks (a call in progress on one finishes
// first), and then the store: its methods, Dir aside, fail with
// ErrClosed. Closing a closed store does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	open := s.open
	s.open = nil
	s.mu.Unlock()
	var errList []error
	for w := range open {
		errList = append(errList, w.Close())
	}
	return errors.Join(errList...)
}

// check returns ErrClosed for a closed store.
func (s *Store) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

func (s *Store) fs() vfs.FS {
	if s.opts.FS == nil {
		return vfs.OS()
	}
	return s.opts.FS
}

func (s *Store) now() time.Time {
	if s.opts.Now == nil {
		return time.Now()
	}
	return s.opts.Now()
}

func (s *Store) newID() (string, error) {
	var id string
	if s.opts.NewID != nil {
		id = s.opts.NewID()
	} else {
		u, err := ulid.New(ulid.Timestamp(s.now()), ulid.DefaultEntropy())
		if err != nil {
			u = ulid.Make()
		}
		id = u.String()
	}
	if err := layout.CheckAgentUseID(id); err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return id, nil
}

// Agent is session.json's agent object.
type Agent struct {
	ID          string // agent file path relative to the state root without ".agentuse", or the agent's name
	Name        string
	Description string // omitted when ""
	FilePath    string // absolute path of a local agent file; omitted when ""
	IsSubAgent  bool
}

// Project is session.json's project object.
type Project struct {
	Root string // the state root
	Cwd  string // the run's working directory
}

// SessionSpec describes a new session.
type SessionSpec struct {
	// ID pre-assigns the session id (a ULID), as AgentUse's serve daemon
	// does; it is then session.json's first key. "" draws a new id.
	ID string
	// Trigger is manual, scheduled, api or slack. A trigger given here is
	// written near the top of session.json; "" writes "manual" after
	// status, as AgentUse does for callers that pass none.
	Trigger string
	Agent   Agent
	Model   string // "provider:model"
	// Version is the writing program's version; "" writes "unknown".
	Version string
	Mock    bool // writes "mock": true
	// Config is session.json's config object (timeout, maxSteps,
	// mcpServers, subagents); nil writes {}.
	Config  any
	Project Project
}

// Session is an open AgentUse session, from Store.Create, Store.Open or
// Session.CreateSubagent: it writes the session and holds its writer lock
// until Close. Its methods are safe for concurrent use. (A session as a
// store lists it is an Info.)
type Session struct {
	s       *Store
	dir     string
	id      string
	agentID string
	lk      *lock.Lock

	mu              sync.Mutex
	closed          bool
	artifactAgentID *string
}

// Create creates a top-level session, <store>/<id>-<sanitised agent id>
// with its session.json, and returns it open, holding its writer lock
// until Close.
func (s *Store) Create(ctx context.Context, spec SessionSpec) (*Session, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.create(ctx, s.root, "", spec)
}

// CreateSubagent creates a child session of w's session, nested at
// <w's dir>/subagent/<id>-<sanitised agent id>, with parentSessionID set
// and agent.isSubAgent true, and returns it open, holding its writer
// lock.
func (w *Session) CreateSubagent(ctx context.Context, spec SessionSpec) (*Session, error) {
	w.mu.Lock()
	err := w.check()
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	spec.Agent.IsSubAgent = true
	return w.s.create(ctx, filepath.Join(w.dir, layout.AgentUseSubagentDir), w.id, spec)
}

func (s *Store) create(ctx context.Context, parentDir, parentID string, spec SessionSpec) (*Session, error) {
	id := spec.ID
	if id == "" {
		var err error
		if id, err = s.newID(); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	}
	name, err := layout.AgentUseSessionDirName(id, spec.Agent.ID)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	dir := filepath.Join(parentDir, name)
	if err := s.ensureDir(dir); err != nil {
		return nil, fmt.Errorf("create session %s: %w", id, err)
	}
	w, err := s.lockWriter(ctx, dir, id)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, layout.AgentUseSessionFile)
	if _, err := s.fs().Lstat(file); err == nil {
		_ = w.Close()
		return nil, fmt.Errorf("create session %s: %s: %w", id, file, fs.ErrExist)
	}
	w.agentID = spec.Agent.ID
	body, err := sessionJSON(id, parentID, spec, s.now())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("create session %s: %w", id, err)
	}
	if err := s.writeJSON(file, body); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("create session %s: %w", id, err)
	}
	return w, nil
}

// sessionJSON builds session.json as AgentUse's createSession does:
// {...info, id, status, trigger, time}, where info is
// {id?, parentSessionID?, trigger?, agent, model, version, mock?, config,
// project}.
func sessionJSON(id, parentID string, spec SessionSpec, now time.Time) ([]byte, error) {
	b := jsonl.NewObject(512)
	if spec.ID != "" {
		b.String("id", id)
	}
	if parentID != "" {
		b.String("parentSessionID", parentID)
	}
	if spec.Trigger != "" {
		b.String("trigger", spec.Trigger)
	}
	a := jsonl.NewObject(256).String("id", spec.Agent.ID).String("name", spec.Agent.Name)
	if spec.Agent.Description != "" {
		a.String("description", spec.Agent.Description)
	}
	if spec.Agent.FilePath != "" {
		a.String("filePath", spec.Agent.FilePath)
	}
	a.Bool("isSubAgent", spec.Agent.IsSubAgent)
	b.Raw("agent", a.Bytes())
	b.String("model", spec.Model)
	version := spec.Version
	if version == "" {
		version = "unknown"
	}
	b.String("version", version)
	if spec.Mock {
		b.Bool("mock", true)
	}
	config := []byte("{}")
	if spec.Config != nil {
		var err error
		if config, err = encodeAUValue(spec.Config); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	b.Raw("config", config)
	b.Raw("project", jsonl.NewObject(128).String("root", spec.Project.Root).String("cwd", spec.Project.Cwd).Bytes())
	if spec.ID == "" {
		b.String("id", id)
	}
	b.String("status", StatusRunning)
	if spec.Trigger == "" {
		b.String("trigger", "manual")
	}
	ms := float64(now.UnixMilli())
	b.Raw("time", jsonl.NewObject(64).Number("created", ms).Number("updated", ms).Bytes())
	return b.Bytes(), nil
}

// Open opens an existing session for writing, named by the path of its
// directory, its full id or a unique id prefix (see Resolve): it takes
// the session's writer lock, or waits for it with StoreOptions.Wait. A
// directory outside the store is refused (layout.ErrUnsafeName).
func (s *Store) Open(ctx context.Context, name string) (*Session, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	dir, isPath, err := s.pathName(name)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	if !isPath {
		x, err := s.Resolve(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("open session: %w", err)
		}
		dir = x.Dir
	}
	return s.openDir(ctx, dir)
}

// openDir opens the session in directory dir, inside the store, for
// writing.
func (s *Store) openDir(ctx context.Context, dir string) (*Session, error) {
	if err := s.checkDir(dir); err != nil {
		return nil, fmt.Errorf("open session %s: %w", dir, err)
	}
	file := filepath.Join(dir, layout.AgentUseSessionFile)
	if fi, err := s.fs().Lstat(file); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", file)
		}
		return nil, fmt.Errorf("open session %s: %w", dir, notFound(err))
	}
	w, err := s.lockWriter(ctx, dir, "")
	if err != nil {
		return nil, err
	}
	o, err := s.readObject(file)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open session: %w", err)
	}
	id := o.str("id")
	if err := layout.CheckAgentUseID(id); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open session %s: %w", file, err)
	}
	w.id = id
	w.agentID = o.sub("agent").str("id")
	return w, nil
}

// pathName reports whether name is a path rather than an id or id prefix:
// it has a path separator, is "." or "..", or names an existing session
// directory. A path is returned absolute.
func (s *Store) pathName(name string) (string, bool, error) {
	isPath := strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) || name == "." || name == ".."
	if !isPath && name != "" {
		fi, err := s.fs().Lstat(filepath.Join(name, layout.AgentUseSessionFile))
		isPath = err == nil && fi.Mode().IsRegular()
	}
	if !isPath {
		return "", false, nil
	}
	abs, err := filepath.Abs(name)
	return abs, true, err
}

// lockWriter takes the writer lock of the session directory dir.
func (s *Store) lockWriter(ctx context.Context, dir, id string) (*Session, error) {
	lk, err := lock.Acquire(ctx, filepath.Join(dir, layout.AgentUseLockFile), lock.Options{
		Mode:    s.opts.LockMode,
		Command: s.opts.Command,
		Wait:    s.opts.Wait,
	})
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", dir, err)
	}
	w := &Session{s: s, dir: dir, id: id, lk: lk}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = lk.Close()
		return nil, ErrClosed
	}
	s.open[w] = struct{}{}
	return w, nil
}

// ID returns the session id.
func (w *Session) ID() string { return w.id }

// Dir returns the session directory.
func (w *Session) Dir() string { return w.dir }

// Now returns the store's clock (StoreOptions.Now), for the times of new
// parts.
func (w *Session) Now() time.Time { return w.s.now() }

// Close releases the writer lock. Further calls fail with ErrClosed;
// closing a closed session does nothing.
func (w *Session) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.s.mu.Lock()
	delete(w.s.open, w)
	w.s.mu.Unlock()
	return w.lk.Close()
}

func (w *Session) check() error {
	if w.closed {
		return ErrClosed
	}
	return nil
}

// update runs a read-modify-write of the JSON object in file under the
// writer's mutex (the session lock excludes other writers).
func (w *Session) update(file string, fn func(o *auObject) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	if err := w.s.checkDir(filepath.Dir(file)); err != nil {
		return fmt.Errorf("update %s: %w", file, err)
	}
	o, err := w.s.readObject(file)
	if err != nil {
		return err
	}
	if err := fn(o); err != nil {
		return fmt.Errorf("update %s: %w", file, err)
	}
	return w.s.writeJSON(file, o.compact())
}

// UpdateSession merges fields into session.json as AgentUse's
// updateSession does (Object.assign), then sets time.updated to now.
func (w *Session) UpdateSession(fields ...Field) error {
	now := w.s.now()
	return w.update(filepath.Join(w.dir, layout.AgentUseSessionFile), func(o *auObject) error {
		if err := o.merge(fields); err != nil {
			return err
		}
		t := o.sub("time")
		t.set("updated", jsonl.AppendNumber(nil, float64(now.UnixMilli())))
		o.set("time", t.compact())
		return nil
	})
}

// SetStatus sets the session's status (StatusRunning, ...).
func (w *Session) SetStatus(status string) error {
	return w.UpdateSession(Field{Key: "status", Value: status})
}

// SessionError is a session-level error (session.json's error).
type SessionError struct {
	Code       string // EXECUTION_ERROR, AUTH_ERROR, TIMEOUT, USER_STOPPED, ...
	Message    string
	StatusCode int    // omitted when 0
	URL        string // omitted when ""
	Detail     string // omitted when ""
}

func (e SessionError) json(now time.Time) []byte {
	b := jsonl.NewObject(256).String("code", e.Code).String("message", e.Message)
	if e.StatusCode != 0 {
		b.Number("statusCode", float64(e.StatusCode))
	}
	if e.URL != "" {
		b.String("url", e.URL)
	}
	if e.Detail != "" {
		b.String("detail", e.Detail)
	}
	return b.Number("time", float64(now.UnixMilli())).Bytes()
}

// SetError sets status "error" and the session error, stamped with the
// current time, as AgentUse's setSessionError does.
func (w *Session) SetError(e SessionError) error {
	return w.UpdateSession(
		Field{Key: "status", Value: StatusError},
		Field{Key: "error", Value: rawJSON(e.json(w.s.now()))},
	)
}

// ClearError removes the session error.
func (w *Session) ClearError() error {
	return w.UpdateSession(Field{Key: "error", Delete: true})
}

// rawJSON marks canonical JSON bytes for jsonl.Marshal.
type rawJSON []byte

// MarshalJSON returns the bytes.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// Tokens are a message's token totals (assistant.tokens) or a
// step-finish part's tokens. They are AgentUse's, not pi's usage
// (message.Usage): another JSON shape ({input, output, reasoning,
// cache: {read, write}}, no total and no cost), so a type of their own.
type Tokens struct {
	Input      int64
	Output     int64
	Reasoning  int64
	CacheRead  int64
	CacheWrite int64
}

func (t Tokens) json() []byte {
	cache := jsonl.NewObject(32).Number("read", float64(t.CacheRead)).Number("write", float64(t.CacheWrite)).Bytes()
	return jsonl.NewObject(96).Number("input", float64(t.Input)).Number("output", float64(t.Output)).
		Number("reasoning", float64(t.Reasoning)).Raw("cache", cache).Bytes()
}

// MessageSpec describes a new message (one user and assistant
// exchange).
type MessageSpec struct {
	Task       string   // user.prompt.task: the agent's instructions
	User       string   // user.prompt.user; omitted when ""
	System     []string // assistant.system; nil writes []
	ModelID    string   // "provider:model"
	ProviderID string   // "" means the text of ModelID before its first ':'
	Mode       string   // "" means "build"
	Cwd        string   // assistant.path.cwd
	Root       string   // assistant.path.root
	Cost       float64  // always 0 in AgentUse
	Tokens     Tokens
}

// AddMessage creates <id>/message.json as AgentUse's createMessage does
// and returns the new message id.
func (w *Session) AddMessage(m MessageSpec) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return "", err
	}
	id, err := w.s.newID()
	if err != nil {
		return "", fmt.Errorf("add message: %w", err)
	}
	file, err := layout.AgentUseMessagePath(w.dir, id)
	if err != nil {
		return "", fmt.Errorf("add message: %w", err)
	}
	if err := w.s.ensureDir(filepath.Dir(file)); err != nil {
		return "", fmt.Errorf("add message %s: %w", id, err)
	}
	if _, err := w.s.fs().Lstat(file); err == nil {
		return "", fmt.Errorf("add message %s: %s: %w", id, file, fs.ErrExist)
	}
	prompt := jsonl.NewObject(len(m.Task)+len(m.User)+32).String("task", m.Task)
	if m.User != "" {
		prompt.String("user", m.User)
	}
	system := []byte("[")
	for i, s := range m.System {
		if i > 0 {
			system = append(system, ',')
		}
		system = jsonl.AppendString(system, s)
	}
	system = append(system, ']')
	provider := m.ProviderID
	if provider == "" {
		provider, _, _ = strings.Cut(m.ModelID, ":")
	}
	mode := m.Mode
	if mode == "" {
		mode = "build"
	}
	asst := jsonl.NewObject(len(system)+256).Raw("system", system).String("modelID", m.ModelID).
		String("providerID", provider).String("mode", mode).
		Raw("path", jsonl.NewObject(128).String("cwd", m.Cwd).String("root", m.Root).Bytes()).
		Number("cost", m.Cost).Raw("tokens", m.Tokens.json())
	body := jsonl.NewObject(len(system)+512).String("id", id).String("sessionID", w.id).
		Raw("time", jsonl.NewObject(32).Number("created", float64(w.s.now().UnixMilli())).Bytes()).
		Raw("user", jsonl.NewObject(len(m.Task)+64).Raw("prompt", prompt.Bytes()).Bytes()).
		Raw("assistant", asst.Bytes()).Bytes()
	if err := w.s.writeJSON(file, body); err != nil {
		return "", fmt.Errorf("add message %s: %w", id, err)
	}
	return id, nil
}

// MessageUpdate is an update of message.json, merged as
// AgentUse's updateMessage does: Time into time; Tokens into
// assistant.tokens and Cache into assistant.tokens.cache (whenever either
// is non-nil); Assistant into assistant (a "tokens" field there is
// ignored, as in AgentUse); User into user. Existing keys keep their
// position; new keys go last.
type MessageUpdate struct {
	Time      []Field
	Tokens    []Field
	Cache     []Field
	Assistant []Field
	User      []Field
}

// UpdateMessage merges u into the message's message.json.
func (w *Session) UpdateMessage(messageID string, u MessageUpdate) error {
	file, err := layout.AgentUseMessagePath(w.dir, messageID)
	if err != nil {
		return fmt.Errorf("update message: %w", err)
	}
	return w.update(file, func(o *auObject) error {
		if u.Time != nil {
			t := o.sub("time")
			if err := t.merge(u.Time); err != nil {
				return err
			}
			o.set("time", t.compact())
		}
		if u.Tokens != nil || u.Cache != nil || u.Assistant != nil {
			a := o.sub("assistant")
			if u.Tokens != nil || u.Cache != nil {
				tok := a.sub("tokens")
				if err := tok.merge(u.Tokens); err != nil {
					return err
				}
				cache := objectOfOrEmpty(tok.get("cache"))
				if err := cache.merge(u.Cache); err != nil {
					return err
				}
				tok.set("cache", cache.compact())
				a.set("tokens", tok.compact())
			}
			var rest []Field
			for _, f := range u.Assistant {
				if f.Key != "tokens" {
					rest = append(rest, f)
				}
			}
			if err := a.merge(rest); err != nil {
				return err
			}
			o.set("assistant", a.compact())
		}
		if u.User != nil {
			usr := o.sub("user")
			if err := usr.merge(u.User); err != nil {
				return err
			}
			o.set("user", usr.compact())
		}
		return nil
	})
}

func objectOfOrEmpty(v []byte) *auObject {
	if jsonl.KindOf(v) != jsonl.KindObject {
		return &auObject{}
	}
	return objectOf(v)
}

// SetTokens sets the message's token totals (assistant.tokens), as the
// runtime does after every model step.
func (w *Session) SetTokens(messageID string, t Tokens) error {
	return w.UpdateMessage(messageID, MessageUpdate{
		Tokens: []Field{
			{Key: "input", Value: t.Input}, {Key: "output", Value: t.Output}, {Key: "reasoning", Value: t.Reasoning},
		},
		Cache: []Field{{Key: "read", Value: t.CacheRead}, {Key: "write", Value: t.CacheWrite}},
	})
}

// CompleteMessage sets the message's time.completed to now, as a run that
// completes does.
func (w *Session) CompleteMessage(messageID string) error {
	return w.UpdateMessage(messageID, MessageUpdate{
		Time: []Field{{Key: "completed", Value: w.s.now().UnixMilli()}},
	})
}

// Part is the content of a new part: its type and its
// type-specific members in order. AddPart appends id, sessionID and
// messageID. The AgentUse*Part functions build the part types AgentUse
// defines.
type Part struct {
	Type   string
	Fields []Field
}

// reservedPartKey reports the keys AddPart writes itself.
func reservedPartKey(k string) bool {
	return k == "type" || k == "id" || k == "sessionID" || k == "messageID"
}

// AddPart writes a new part of the message, <messageID>/part/<id>.json,
// as AgentUse's addPart does ({type, ...fields, id, sessionID,
// messageID}), and returns its id. The message must exist.
func (w *Session) AddPart(messageID string, p Part) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return "", err
	}
	msgFile, err := layout.AgentUseMessagePath(w.dir, messageID)
	if err != nil {
		return "", fmt.Errorf("add part: %w", err)
	}
	if _, err := w.s.fs().Lstat(msgFile); err != nil {
		return "", fmt.Errorf("add part to message %s: %w", messageID, notFound(err))
	}
	if p.Type == "" {
		return "", fmt.Errorf("add part to message %s: empty part type", messageID)
	}
	o := &auObject{}
	o.set("type", jsonl.AppendString(nil, p.Type))
	for _, f := range p.Fields {
		if reservedPartKey(f.Key) {
			return "", fmt.Errorf("add part to message %s: field %s is set by AddPart", messageID, f.Key)
		}
	}
	if err := o.merge(p.Fields); err != nil {
		return "", fmt.Errorf("add part to message %s: %w", messageID, err)
	}
	id, err := w.s.newID()
	if err != nil {
		return "", fmt.Errorf("add part: %w", err)
	}
	file, err := layout.AgentUsePartPath(w.dir, messageID, id)
	if err != nil {
		return "", fmt.Errorf("add part: %w", err)
	}
	if err := w.s.ensureDir(filepath.Dir(file)); err != nil {
		return "", fmt.Errorf("add part %s: %w", id, err)
	}
	if _, err := w.s.fs().Lstat(file); err == nil {
		return "", fmt.Errorf("add part %s: %s: %w", id, file, fs.ErrExist)
	}
	o.set("id", jsonl.AppendString(nil, id))
	o.set("sessionID", jsonl.AppendString(nil, w.id))
	o.set("messageID", jsonl.AppendString(nil, messageID))
	if err := w.s.writeJSON(file, o.compact()); err != nil {
		return "", fmt.Errorf("add part %s: %w", id, err)
	}
	return id, nil
}

// UpdatePart merges fields into a part as AgentUse's updatePart does
// ({...part, ...fields}: a shallow merge, so state and time are replaced
// whole). id, sessionID and messageID cannot be changed.
func (w *Session) UpdatePart(messageID, partID string, fields ...Field) error {
	for _, f := range fields {
		if f.Key == "id" || f.Key == "sessionID" || f.Key == "messageID" {
			return fmt.Errorf("update part %s: field %s cannot be changed", partID, f.Key)
		}
	}
	return w.updatePart(messageID, partID, func(o *auObject) error { return o.merge(fields) })
}

func (w *Session) updatePart(messageID, partID string, fn func(o *auObject) error) error {
	file, err := layout.AgentUsePartPath(w.dir, messageID, partID)
	if err != nil {
		return fmt.Errorf("update part: %w", err)
	}
	return w.update(file, fn)
}

// WriteTools writes tools.json, the tools snapshot
// ({tools: [{name, description?, inputSchema?}], providerOptions?}).
func (w *Session) WriteTools(snapshot any) error {
	return w.writeWhole(layout.AgentUseToolsFile, snapshot)
}

// WriteContext writes context.json, the context snapshot ({version: 1,
// updatedAt, messageID?, messages, usage}).
func (w *Session) WriteContext(snapshot any) error {
	return w.writeWhole(layout.AgentUseContextFile, snapshot)
}

func (w *Session) writeWhole(name string, v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	file := filepath.Join(w.dir, name)
	if err := w.s.checkDir(w.dir); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	body, err := encodeAUValue(v)
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return w.s.writeJSON(file, body)
}

// readObject reads the JSON object in file. A missing file matches
// ErrNotFound; an unparseable one is a *CorruptError.
func (s *Store) readObject(file string) (*auObject, error) {
	raw, err := s.fs().ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, notFound(err))
	}
	return parseAUObject(file, raw)
}

// notFound adds ErrNotFound to a not-exist error.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return err
}

// writeJSON writes the compact JSON object body to file as AgentUse lays
// it out.
func (s *Store) writeJSON(file string, body []byte) error {
	out, err := jsonl.Indent(make([]byte, 0, len(body)*2), body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", file, err)
	}
	return s.writeFile(file, out)
}

// writeFile replaces file atomically; under SyncEach also durably. A file
// being replaced keeps its mode, owner and group; one its owner made
// read-only, or that the process could not write, is refused.
func (s *Store) writeFile(file string, data []byte) error {
	if s.opts.Sync != SyncNone {
		return vfs.WriteFileAtomic(s.fs(), file, data, vfs.FileMode)
	}
	return vfs.WriteFileAtomicNoSync(s.fs(), file, data, vfs.FileMode)
}

// ensureDir makes dir, which must lie in the store, and its missing
// parents with DirMode. Every component below the store root must be a
// real directory: a symbolic link there is refused, so nothing is written
// outside the store through a link planted inside it. Under SyncEach the
// parent of every directory created is synced, so the new entries are
// durable.
func (s *Store) ensureDir(dir string) error { return s.walkDir(dir, true) }

// checkDir is ensureDir without creating anything: dir must exist.
func (s *Store) checkDir(dir string) error { return s.walkDir(dir, false) }

func (s *Store) walkDir(dir string, create bool) error {
	fsys := s.fs()
	rel, err := s.rel(dir)
	if err != nil {
		return err
	}
	sync := s.opts.Sync != SyncNone
	mkdir := fsys.MkdirAll
	if sync {
		// Every directory created, the root's missing ancestors among
		// them, must be durable; on failure the new ones are removed.
		mkdir = func(d string, perm fs.FileMode) error { return vfs.MkdirAllSync(fsys, d, perm) }
	}
	if _, err := fsys.Lstat(s.root); create && errors.Is(err, fs.ErrNotExist) {
		if err := mkdir(s.root, vfs.DirMode); err != nil {
			return fmt.Errorf("create directory %s: %w", s.root, err)
		}
	}
	if rel == "." {
		return nil
	}
	d := s.root
	for _, elem := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, elem)
		fi, err := fsys.Lstat(d)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("directory %s: %w", d, vfs.ErrSymlink)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("directory %s: not a directory", d)
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist) || !create:
			return fmt.Errorf("directory %s: %w", d, notFound(err))
		}
		if err := mkdir(d, vfs.DirMode); err != nil {
			return fmt.Errorf("create directory %s: %w", d, err)
		}
	}
	return nil
}

// rel returns dir relative to the store root, or an error when dir is not
// inside the store.
func (s *Store) rel(dir string) (string, error) {
	rel, err := filepath.Rel(s.root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the session store %s: %w", dir, s.root, layout.ErrUnsafeName)
	}
	return rel, nil
}
