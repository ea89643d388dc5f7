package agentuse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Reading follows AgentUse's readers (spec section 7): a directory that
// holds a regular file named session.json is a session, whatever its name;
// below a session only its subagent/ directory is searched; below any other
// directory every subdirectory is. Only names ending in ".json" are data,
// so temporary files and sessctl's lock files are ignored. Symbolic links
// are never followed. Readers take no lock: AgentUse and sessctl replace
// files atomically, so a reader sees each file whole, old or new.

// Info is one session as a store lists it (List, Sessions, Resolve):
// what its session.json says and where it is. An open session is a
// Session.
type Info struct {
	ID       string // session.json's id; the directory name's id when the file is unreadable
	Dir      string // absolute session directory
	RelDir   string // Dir relative to the store root, '/'-separated
	AgentDir string // the directory name after "<id>-" (or sanitised agent.id)
	// Nested is set for a session found inside another session's
	// subagent/ directory; Parent is then the innermost such session.
	Nested bool
	Parent *Info

	ParentID   string // parentSessionID
	AgentID    string // agent.id
	AgentName  string // agent.name
	IsSubAgent bool   // agent.isSubAgent
	Model      string
	Status     string // "" when absent (sessions before AgentUse 0.8.0)
	Trigger    string // "manual" when absent
	Created    int64  // time.created in ms; 0 when unknown
	Updated    int64  // time.updated in ms; 0 when unknown
	ErrorCode  string // error.code, "" when none

	Raw []byte // session.json as read
	// Err is a *CorruptError when session.json cannot be parsed, or the
	// error reading it. The session is still listed (last, as AgentUse
	// lists it) and its messages can still be read.
	Err error

	// Skipped lists what discovery could not read below this session's
	// subagent/ directory, where no session nested deeper holds it: a
	// directory that could not be read, a session.json that is not a
	// regular file. Each error names the path. The sessions there are
	// missing from Children.
	Skipped []error

	// Children are the child sessions in AgentUse's listChildSessions
	// order: sessions inside this one's subagent/ directory whose
	// parentSessionID is this session's id, by time.created, then
	// agent.id, then id.
	Children []*Info
}

// TopLevel reports whether AgentUse's session list shows the session
// by default, without subagent sessions: it is not nested in another
// session and is not a subagent.
func (x *Info) TopLevel() bool { return !x.Nested && !x.IsSubAgent }

// Sessions returns an iterator over every session of the store, nested
// ones included, in directory order (names sorted) with parents before
// their nested children, each linked to its parent and its children. A
// top-level session is read with everything below it before it is
// yielded, so its tree's Children are complete; nothing else is held. A
// missing store yields nothing. A session.json that cannot be parsed
// yields a session with Err set. What is passed over (a directory below
// the root that cannot be read, a session.json that is not a regular
// file: a named pipe, a symbolic link, whose directory is then not a
// session) is yielded as a nil Info and an error naming its path, where
// it was found, and the iteration goes on, so that one bad directory
// costs its own sessions only; the innermost session around it lists it
// in Skipped too. An error reading the root, a closed store or ctx done
// yields the error and ends the iteration.
func (s *Store) Sessions(ctx context.Context) iter.Seq2[*Info, error] {
	return func(yield func(*Info, error) bool) {
		if err := s.check(); err != nil {
			yield(nil, err)
			return
		}
		if err := s.walk(ctx, yield); err != nil && err != errStop {
			yield(nil, err)
		}
	}
}

// errSymlink is why a symbolic link in a store is passed over: readers
// never follow one.
var errSymlink = errors.New("a symbolic link, not followed")

// errStop ends a walk whose caller wants no more.
var errStop = errors.New("stop")

// discover returns every session of the store (Sessions' order) and
// everything it passed over, each error naming its path.
func (s *Store) discover(ctx context.Context) (out []*Info, skipped []error, err error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	err = s.walk(ctx, func(x *Info, err error) bool {
		if x != nil {
			out = append(out, x)
		} else {
			skipped = append(skipped, err)
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}

// walk discovers the store's sessions for Sessions, through Walk's
// walkDirs: it calls emit with each session, and with a nil session and
// the error of each thing passed over, in the order found; the sessions
// of a top-level session's tree, and what was passed over in it, are
// emitted once the tree is read, its Children sorted. An error reading
// the root, or ctx's, is returned; errStop when emit returned false.
func (s *Store) walk(ctx context.Context, emit func(*Info, error) bool) error {
	type event struct {
		x   *Info
		err error
	}
	infos := map[*Dir]*Info{} // the sessions of the tree being read
	var pending []event       // the events of the tree being read
	stopped := false
	send := func(ev event) {
		if !stopped && !emit(ev.x, ev.err) {
			stopped = true
		}
	}
	flush := func() {
		// The tree is read: its children are all known.
		for _, ev := range pending {
			if ev.x != nil {
				slices.SortStableFunc(ev.x.Children, compareChildren)
			}
		}
		for _, ev := range pending {
			send(ev)
		}
		pending = pending[:0]
		clear(infos)
	}
	err := walkDirs(ctx, s.fs(), s.root, func(d, in *Dir, err error) bool {
		if err != nil {
			if in == nil {
				flush()
				send(event{err: err})
			} else {
				x := infos[in]
				x.Skipped = append(x.Skipped, err)
				pending = append(pending, event{err: err})
			}
			return !stopped
		}
		if d.Parent == nil {
			flush()
		}
		x := s.readSessionInfo(d.Path, d.Rel)
		x.Nested = d.Nested()
		infos[d] = x
		if d.Parent != nil {
			x.Parent = infos[d.Parent]
		}
		for a := d.Parent; a != nil; a = a.Parent {
			if p := infos[a]; x.ParentID != "" && x.ParentID == p.ID {
				p.Children = append(p.Children, x)
			}
		}
		pending = append(pending, event{x: x})
		return !stopped
	})
	if err == nil {
		flush()
	}
	if err == nil && stopped {
		err = errStop
	}
	return err
}

// readDirError is the error of a directory that could not be read: an
// *fs.PathError naming it once.
func readDirError(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == dir {
		err = pe.Err
	}
	return &fs.PathError{Op: "read directory", Path: dir, Err: err}
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// compareChildren is listChildSessions' order.
func compareChildren(a, b *Info) int {
	if a.Created != b.Created {
		if a.Created < b.Created {
			return -1
		}
		return 1
	}
	if c := localeCompare(a.AgentID, b.AgentID); c != 0 {
		return c
	}
	return localeCompare(a.ID, b.ID)
}

// readSessionInfo reads the session.json of the session in dir.
func (s *Store) readSessionInfo(dir, rel string) *Info {
	name := filepath.Base(dir)
	x := &Info{Dir: dir, RelDir: rel, Trigger: "manual"}
	file := filepath.Join(dir, layout.AgentUseSessionFile)
	raw, err := s.fs().ReadFile(file)
	var o *auObject
	if err != nil {
		err = fmt.Errorf("read session %s: %w", file, err)
	} else {
		x.Raw = raw
		o, err = parseAUObject(file, raw)
	}
	if err != nil {
		x.Err = err
		x.ID, x.AgentDir, _ = layout.SplitAgentUseDirName(name)
		return x
	}
	x.ID = o.str("id")
	x.ParentID = o.str("parentSessionID")
	agent := o.sub("agent")
	x.AgentID = agent.str("id")
	x.AgentName = agent.str("name")
	x.IsSubAgent = string(agent.get("isSubAgent")) == "true"
	x.Model = o.str("model")
	x.Status = o.str("status")
	if t := o.str("trigger"); t != "" {
		x.Trigger = t
	}
	tm := o.sub("time")
	x.Created = int64Of(tm.get("created"))
	x.Updated = int64Of(tm.get("updated"))
	x.ErrorCode = o.sub("error").str("code")
	if p := x.ID + "-"; x.ID != "" && strings.HasPrefix(name, p) {
		x.AgentDir = name[len(p):]
	} else {
		x.AgentDir = layout.SanitizeAgentName(x.AgentID)
	}
	return x
}

func int64Of(v []byte) int64 {
	f, ok := jsonl.Number(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(f)
}

// ListOptions select what List returns.
type ListOptions struct {
	// Subagents includes every session, not only the top-level ones.
	Subagents bool
	// Warn, when not nil, is told of everything Sessions passed over (a
	// directory that could not be read, a session.json that is not a
	// regular file), each error naming its path, in the order found,
	// after the listing and from the calling goroutine.
	Warn func(err error)
}

// List returns the sessions in AgentUse's list order: by time.created,
// newest first, sessions whose session.json is unreadable last; top-level
// sessions only unless o.Subagents is set. Ties keep directory order.
func (s *Store) List(ctx context.Context, o ListOptions) ([]*Info, error) {
	all, skipped, err := s.discover(ctx)
	if err != nil {
		return nil, err
	}
	if o.Warn != nil {
		for _, err := range skipped {
			o.Warn(err)
		}
	}
	var out []*Info
	for _, x := range all {
		if o.Subagents || x.TopLevel() {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b *Info) int {
		ca, cb := a.Created, b.Created
		if a.Err != nil {
			ca = 0
		}
		if b.Err != nil {
			cb = 0
		}
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	return out, nil
}

// Resolve returns the session name stands for: the path of its
// directory; otherwise its full id, or the only session whose id starts
// with name (compared case-insensitively, as AgentUse's CLI does). A name
// that has a path separator, or names an existing session directory, is
// a path. Nested sessions are found too. A name no session matches, a
// path to a directory that is not one of the store's sessions among them,
// is an error matching ErrNotFound; a name several sessions match is an
// *AmbiguousError.
func (s *Store) Resolve(ctx context.Context, name string) (*Info, error) {
	if name == "" {
		return nil, fmt.Errorf("resolve session: empty name: %w", ErrNotFound)
	}
	dir, isPath, err := s.pathName(name)
	if err != nil {
		return nil, fmt.Errorf("resolve session %s: %w", name, err)
	}
	all, skipped, err := s.discover(ctx)
	if err != nil {
		return nil, err
	}
	if isPath {
		for _, x := range all {
			if x.Dir == dir {
				return x, nil
			}
		}
		return nil, fmt.Errorf("resolve session %s: not a session of the store %s: %w", dir, s.root, ErrNotFound)
	}
	var exact, prefix []*Info
	up := strings.ToUpper(name)
	for _, x := range all {
		switch {
		case x.ID == "":
		case x.ID == name:
			exact = append(exact, x)
		case strings.HasPrefix(strings.ToUpper(x.ID), up):
			prefix = append(prefix, x)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) > 1:
		return nil, ambiguous(name, exact)
	case len(prefix) == 1:
		return prefix[0], nil
	case len(prefix) > 1:
		return nil, ambiguous(name, prefix)
	}
	if len(skipped) > 0 {
		// It may be in what could not be read: say so, not "not found".
		return nil, fmt.Errorf("session %s in %s: not among the sessions that could be read (%d passed over): %w",
			jsonl.KeyString(name), s.root, len(skipped), skipped[0])
	}
	return nil, errs.NotFound("session " + jsonl.KeyString(name) + " in " + s.root)
}

// ambiguous is the *AmbiguousError of a name that matches the sessions
// xs: their ids and directories, sorted by directory.
func ambiguous(name string, xs []*Info) error {
	e := &AmbiguousError{Name: name}
	for _, x := range xs {
		e.Candidates = append(e.Candidates, errs.Candidate{ID: x.ID, Path: x.Dir})
	}
	slices.SortFunc(e.Candidates, func(a, b errs.Candidate) int { return strings.Compare(a.Path, b.Path) })
	return e
}

// Message is one message of a session with its parts.
type Message struct {
	ID           string // message.json's id; the directory name when unreadable
	Dir          string
	Created      int64 // time.created in ms
	HasCreated   bool
	Completed    int64 // time.completed in ms
	HasCompleted bool
	Tokens       Tokens // assistant.tokens
	Raw          []byte // message.json as read
	Err          error  // *CorruptError when message.json cannot be parsed
	Parts        []*PartInfo
}

// PartInfo is one part file.
type PartInfo struct {
	ID      string // the part's id; the file name without ".json" when it has none
	Type    string
	Path    string
	SortKey float64 // getMessageParts' key; +Inf when the part has none
	Tool    string  // tool parts: tool name
	CallID  string  // tool parts: callID
	Status  string  // tool parts: state.status
	Role    string  // text parts: role ("user" for synthetic prompts)
	Raw     []byte  // the file as read
}

// HasSortKey reports whether the part has a sort key (AgentUse uses
// Number.MAX_SAFE_INTEGER for the others).
func (p *PartInfo) HasSortKey() bool { return !math.IsInf(p.SortKey, 1) }

// Contents is everything stored in one session directory, not
// counting its child sessions.
type Contents struct {
	Info *Info // the session, as listed
	// Messages in AgentUse's order (time.created, then id); messages whose
	// message.json is unreadable follow, by directory name. Each
	// message's parts are in getMessageParts order: by sort key
	// (time.start; for tools state.time.start, or state.suspendedAt while
	// pending; none sorts last), then by id.
	Messages []*Message
	Tools    []byte // tools.json as read; nil when absent
	Context  []byte // context.json as read; nil when absent
	// Files lists every file of the session directory except those under
	// subagent/, relative, '/'-separated, sorted.
	Files []string
	// Problems lists the files that could not be parsed (each a
	// *CorruptError naming its path, matching ErrCorrupt).
	Problems []*CorruptError
	// Skipped lists what was not read, each error naming its path: a
	// file or directory that could not be read, a symbolic link (never
	// followed: a message directory that is a link is not read), a named
	// pipe or other special file, and the session's own Skipped. With
	// Problems, it is everything of the session directory that is not in
	// Messages, Tools and Context.
	Skipped []error
}

// Read reads the messages, parts and snapshots of a session as listed
// (by List, Sessions or Resolve). Damaged
// files are reported in Problems, and what cannot be read in Skipped; the
// rest of the session still reads. An error reading the session
// directory itself is returned.
func (s *Store) Read(ctx context.Context, x *Info) (*Contents, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	c := &Contents{Info: x}
	if x.Err != nil {
		var ce *CorruptError
		if errors.As(x.Err, &ce) {
			c.Problems = append(c.Problems, ce)
		} else {
			c.Skipped = append(c.Skipped, x.Err)
		}
	}
	c.Skipped = append(c.Skipped, x.Skipped...)
	fsys := s.fs()
	ents, err := fsys.ReadDir(x.Dir)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", x.Dir, err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		switch {
		case name == layout.AgentUseSubagentDir && e.IsDir():
			continue
		case e.IsDir():
			m, err := s.readMessage(ctx, c, filepath.Join(x.Dir, name))
			if err != nil {
				return nil, err
			}
			if m != nil {
				c.Messages = append(c.Messages, m)
			}
		case e.Type().IsRegular() && (name == layout.AgentUseToolsFile || name == layout.AgentUseContextFile):
			file := filepath.Join(x.Dir, name)
			raw, err := fsys.ReadFile(file)
			if err != nil {
				c.Skipped = append(c.Skipped, fmt.Errorf("read %s: %w", file, err))
				continue
			}
			if _, err := parseAUObject(file, raw); err != nil {
				c.Problems = append(c.Problems, err.(*CorruptError))
				continue
			}
			if name == layout.AgentUseToolsFile {
				c.Tools = raw
			} else {
				c.Context = raw
			}
		}
	}
	slices.SortStableFunc(c.Messages, compareMessages)
	files, skipped, err := s.files(ctx, x.Dir)
	if err != nil {
		return nil, err
	}
	c.Files = files
	c.Skipped = dedupePaths(append(c.Skipped, skipped...))
	return c, nil
}

// dedupePaths keeps the first error about each path.
func dedupePaths(errs []error) []error {
	seen := map[string]bool{}
	out := errs[:0]
	for _, err := range errs {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			if seen[pe.Path] {
				continue
			}
			seen[pe.Path] = true
		}
		out = append(out, err)
	}
	return out
}

// readMessage reads <dir>/message.json and <dir>/part/*.json. A directory
// without message.json is not a message (nil). What cannot be read is
// added to c.Skipped (a directory or a file that is not a regular one is
// reported by files).
func (s *Store) readMessage(ctx context.Context, c *Contents, dir string) (*Message, error) {
	fsys := s.fs()
	file := filepath.Join(dir, layout.AgentUseMessageFile)
	fi, err := fsys.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Skipped = append(c.Skipped, err)
		}
		return nil, nil
	}
	raw, err := fsys.ReadFile(file)
	if err != nil {
		c.Skipped = append(c.Skipped, fmt.Errorf("read %s: %w", file, err))
		return nil, nil
	}
	m := &Message{ID: filepath.Base(dir), Dir: dir, Raw: raw}
	if o, err := parseAUObject(file, raw); err != nil {
		m.Err = err
		c.Problems = append(c.Problems, err.(*CorruptError))
	} else {
		if id := o.str("id"); id != "" {
			m.ID = id
		}
		t := o.sub("time")
		if v := t.get("created"); jsonl.KindOf(v) == jsonl.KindNumber {
			m.Created, m.HasCreated = int64Of(v), true
		}
		if v := t.get("completed"); v != nil && jsonl.KindOf(v) != jsonl.KindNull {
			m.Completed, m.HasCompleted = int64Of(v), true
		}
		tok := o.sub("assistant").sub("tokens")
		cache := tok.sub("cache")
		m.Tokens = Tokens{
			Input: int64Of(tok.get("input")), Output: int64Of(tok.get("output")), Reasoning: int64Of(tok.get("reasoning")),
			CacheRead: int64Of(cache.get("read")), CacheWrite: int64Of(cache.get("write")),
		}
	}
	pdir := filepath.Join(dir, layout.AgentUsePartDir)
	ents, _ := fsys.ReadDir(pdir) // a part directory that cannot be read is reported by files
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.Type().IsRegular() || !layout.IsAgentUseDataFile(e.Name()) {
			continue
		}
		p, err := s.readPart(filepath.Join(pdir, e.Name()))
		if err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) {
				c.Problems = append(c.Problems, ce)
			} else {
				c.Skipped = append(c.Skipped, err)
			}
			continue
		}
		m.Parts = append(m.Parts, p)
	}
	slices.SortStableFunc(m.Parts, func(a, b *PartInfo) int {
		if a.SortKey != b.SortKey {
			if a.SortKey < b.SortKey {
				return -1
			}
			return 1
		}
		return localeCompare(a.ID, b.ID)
	})
	return m, nil
}

// readPart reads one part file and computes its sort key. It scans the
// raw bytes (validated once) instead of building objects, as sessions can
// hold many thousands of parts.
func (s *Store) readPart(file string) (*PartInfo, error) {
	raw, err := s.fs().ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	i := jsonl.SkipWS(raw, 0)
	end, err := jsonl.SkipValue(raw, i)
	switch {
	case err != nil:
		return nil, &CorruptError{Path: file, Err: err}
	case jsonl.SkipWS(raw, end) != len(raw):
		return nil, &CorruptError{Path: file, Err: errors.New("trailing data after the JSON value")}
	case jsonl.KindOf(raw[i:end]) != jsonl.KindObject:
		return nil, &CorruptError{Path: file, Err: errNotObject}
	}
	obj := raw[i:end]
	str := func(v []byte) string { s, _ := jsonl.String(v); return s }
	var typ, id, tm, state, role, tool, callID []byte
	_ = jsonl.Members(obj, func(m *jsonl.Member) bool {
		switch {
		case m.KeyIs("type"):
			typ = m.Value
		case m.KeyIs("id"):
			id = m.Value
		case m.KeyIs("time"):
			tm = m.Value
		case m.KeyIs("state"):
			state = m.Value
		case m.KeyIs("role"):
			role = m.Value
		case m.KeyIs("tool"):
			tool = m.Value
		case m.KeyIs("callID"):
			callID = m.Value
		}
		return true
	})
	p := &PartInfo{ID: str(id), Type: str(typ), Path: file, Raw: raw, SortKey: math.Inf(1)}
	if p.ID == "" {
		p.ID = strings.TrimSuffix(filepath.Base(file), ".json")
	}
	lookup := func(obj []byte, key string) []byte {
		if jsonl.KindOf(obj) != jsonl.KindObject {
			return nil
		}
		v, _ := jsonl.Lookup(obj, key)
		return v
	}
	key := func(v []byte) {
		if jsonl.KindOf(v) == jsonl.KindNumber {
			if f, ok := jsonl.Number(v); ok {
				p.SortKey = f
			}
		}
	}
	switch p.Type {
	case "text", "reasoning", "compaction", "learning", "error", "log":
		key(lookup(tm, "start"))
		if p.Type == "text" {
			p.Role = str(role)
		}
	case "tool":
		p.Tool, p.CallID = str(tool), str(callID)
		p.Status = str(lookup(state, "status"))
		if p.Status == "pending" {
			key(lookup(state, "suspendedAt"))
		} else {
			key(lookup(lookup(state, "time"), "start"))
		}
	}
	return p, nil
}

// compareMessages is getSessionMessages' order; unreadable messages last.
func compareMessages(a, b *Message) int {
	if (a.Err == nil) != (b.Err == nil) {
		if a.Err == nil {
			return -1
		}
		return 1
	}
	if a.HasCreated && b.HasCreated && a.Created != b.Created {
		if a.Created < b.Created {
			return -1
		}
		return 1
	}
	return localeCompare(a.ID, b.ID)
}

// files lists the files of a session directory, excluding subagent/
// (DirFiles), and what it passes over below it: directories that could
// not be read, symbolic links (listed, never followed) and special files
// (listed). An error reading dir itself is returned.
func (s *Store) files(ctx context.Context, dir string) (out []string, skipped []error, err error) {
	files, skipped, err := DirFiles(ctx, s.fs(), dir, false)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			skipped = append(skipped, &fs.PathError{Op: "open", Path: filepath.Join(dir, filepath.FromSlash(f.Rel)), Err: errSymlink})
		case !f.Mode.IsRegular():
			skipped = append(skipped, &fs.PathError{Op: "open", Path: filepath.Join(dir, filepath.FromSlash(f.Rel)), Err: vfs.ErrNotRegular})
		}
		out = append(out, f.Rel)
	}
	return out, skipped, nil
}

// localeCompare approximates JavaScript's String.prototype.localeCompare
// in Node's default (ICU root) collation, which AgentUse uses to break
// ties: ASCII punctuation and symbols sort before digits, digits before
// letters, letters compare case-insensitively first and lower case before
// upper case only when that is the sole difference. Other characters sort
// after ASCII by code point. For ULIDs it is plain string order.
func localeCompare(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if pa, pb := primaryWeight(ra[i]), primaryWeight(rb[i]); pa != pb {
			if pa < pb {
				return -1
			}
			return 1
		}
	}
	if len(ra) != len(rb) {
		if len(ra) < len(rb) {
			return -1
		}
		return 1
	}
	for i := range ra {
		if ra[i] != rb[i] {
			// Same letter, different case: lower case first.
			if ra[i] > rb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// icuASCII is the printable ASCII characters in ICU root collation order
// (letters case-folded), as Node 20 sorts them with localeCompare.
const icuASCII = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"

func primaryWeight(r rune) int {
	if r >= 'A' && r <= 'Z' {
		r += 'a' - 'A'
	}
	if r < 0x80 {
		if i := strings.IndexRune(icuASCII, r); i >= 0 {
			return i + 1
		}
		return 0 // control characters
	}
	return len(icuASCII) + int(r)
}
