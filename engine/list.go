package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/layout"
)

// SessionInfo is what listing reports about one session file: pi's
// SessionInfo, field for field.
type SessionInfo struct {
	Path string
	// ID is the header's id as JSON (a string in every valid file; pi
	// passes other types through).
	ID []byte
	// Cwd is the header's cwd, or "" when it is missing or not a string.
	Cwd string
	// Name is the trimmed name of the last session_info with a non-empty
	// name, when HasName.
	Name    string
	HasName bool
	// ParentSessionPath is the header's parentSession as JSON, nil when
	// absent.
	ParentSessionPath []byte
	// Created is the header timestamp; CreatedValid is false when it does
	// not parse (pi's Invalid Date, null in JSON).
	Created      time.Time
	CreatedValid bool
	// Modified is the time of the last user or assistant message, else the
	// header time, else the file's mtime.
	Modified time.Time
	// MessageCount counts message entries of every role.
	MessageCount int
	// FirstMessage is the text of the first user message with text, or
	// "(no messages)".
	FirstMessage string
	// AllMessagesText joins the texts of all user and assistant messages
	// with single spaces.
	AllMessagesText string
	// Size and ModTime are the file's size and mtime when it was read.
	Size    int64
	ModTime time.Time
}

// IDString returns the id as a string (its JSON text when not a string).
func (i *SessionInfo) IDString() string {
	if s, ok := layout.String(i.ID); ok {
		return s
	}
	return string(i.ID)
}

// ListOptions configure List and ListAll.
type ListOptions struct {
	// Dir lists this directory instead of the default one for the cwd.
	Dir string
	// AgentDir and Agent locate the store (see Options).
	AgentDir string
	Agent    layout.Agent
	// Progress, when not nil, is called after each file with the number
	// of files done and the total, from one goroutine at a time.
	Progress func(loaded, total int)
	// FS is the filesystem; nil means layout.OS().
	FS layout.FS
}

func (o ListOptions) fs() layout.FS { return orOS(o.FS) }

func orOS(fsys layout.FS) layout.FS {
	if fsys == nil {
		return layout.OS()
	}
	return fsys
}

// List returns the sessions of cwd's directory (or o.Dir), newest
// modification first, as pi's SessionManager.list does. Files that are not
// sessions (no header as first object) are left out. A missing directory
// gives an empty list; the default directory is created, as pi does.
func List(ctx context.Context, cwd string, o ListOptions) ([]SessionInfo, error) {
	dir := o.Dir
	if dir == "" {
		opts := Options{AgentDir: o.AgentDir, Agent: o.Agent, FS: o.FS}
		var err error
		if dir, err = opts.sessionDir(cwd); err != nil {
			return nil, err
		}
	}
	names, err := sessionFiles(o.fs(), dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []SessionInfo{}, nil
		}
		return nil, err
	}
	return listFiles(ctx, o, names)
}

// ListAll returns the sessions of every per-cwd directory under
// <agentDir>/sessions (immediate subdirectories only, symlinks not
// followed), newest modification first.
func ListAll(ctx context.Context, o ListOptions) ([]SessionInfo, error) {
	agent := o.AgentDir
	if agent == "" {
		var err error
		if agent, err = layout.AgentDir(o.Agent); err != nil {
			return nil, err
		}
	}
	root := layout.SessionsDir(agent)
	fsys := o.fs()
	ents, err := fsys.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []SessionInfo{}, nil
		}
		return nil, err
	}
	var files []string
	for _, d := range ents {
		if d.Type()&fs.ModeSymlink != 0 || !d.IsDir() {
			continue
		}
		names, err := sessionFiles(fsys, filepath.Join(root, d.Name()))
		if err != nil {
			continue
		}
		files = append(files, names...)
	}
	return listFiles(ctx, o, files)
}

// sessionFiles lists the *.jsonl files of dir, by name.
func sessionFiles(fsys layout.FS, dir string) ([]string, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ents {
		if layout.IsSessionFileName(d.Name()) && !d.IsDir() {
			out = append(out, filepath.Join(dir, d.Name()))
		}
	}
	return out, nil
}

// listFiles builds the infos of files on every CPU and sorts them.
func listFiles(ctx context.Context, o ListOptions, files []string) ([]SessionInfo, error) {
	infos := make([]*SessionInfo, len(files))
	var mu sync.Mutex
	done := 0
	next := 0
	workers := min(runtime.GOMAXPROCS(0), len(files))
	var wg sync.WaitGroup
	var ctxErr error
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				if next >= len(files) || ctxErr != nil {
					mu.Unlock()
					return
				}
				if err := ctx.Err(); err != nil {
					ctxErr = err
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				info, err := ReadInfo(o.fs(), files[i])
				if err == nil {
					infos[i] = info
				}
				mu.Lock()
				done++
				if o.Progress != nil {
					o.Progress(done, len(files))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctxErr != nil {
		return nil, ctxErr
	}
	out := make([]SessionInfo, 0, len(files))
	for _, in := range infos {
		if in != nil {
			out = append(out, *in)
		}
	}
	SortInfos(out)
	return out, nil
}

// SortInfos sorts by Modified, newest first; ties keep their order.
func SortInfos(infos []SessionInfo) {
	slices.SortStableFunc(infos, func(a, b SessionInfo) int {
		return b.Modified.Compare(a.Modified)
	})
}

// errNotSession is returned by ReadInfo for files pi does not list.
var errNotSession = errors.New("not a session file")

// ReadInfo reads one file's SessionInfo without migrating it. Files whose
// first JSON object is not a session header are reported with an error
// (pi leaves them out of listings). A nil fsys means layout.OS().
func ReadInfo(fsys layout.FS, path string) (*SessionInfo, error) {
	fsys = orOS(fsys)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st, err := fsys.Stat(path)
	if err != nil {
		return nil, err
	}
	return InfoFromBytes(path, data, st.ModTime(), st.Size())
}

// InfoFromBytes computes a SessionInfo from a file's bytes, mtime and
// size.
func InfoFromBytes(path string, data []byte, mtime time.Time, size int64) (*SessionInfo, error) {
	p := layout.ParseFile(data)
	if len(p.Entries) == 0 || !p.Entries[0].IsHeader() {
		return nil, errNotSession
	}
	return infoFromEntries(path, p.Entries, mtime, size), nil
}

func infoFromEntries(path string, entries []layout.Entry, mtime time.Time, size int64) *SessionInfo {
	h := &entries[0]
	info := &SessionInfo{Path: path, Size: size, ModTime: mtime}
	info.ID, _ = h.Field("id")
	if cwd, ok := h.StringField("cwd"); ok {
		info.Cwd = cwd
	}
	if ps, ok := h.Field("parentSession"); ok {
		info.ParentSessionPath = ps
	}
	ts, tsOK := h.Field("timestamp")
	headerMs, headerOK := dateValue(ts, tsOK)
	if headerOK {
		info.Created, info.CreatedValid = time.UnixMilli(int64(headerMs)).UTC(), true
	}
	var texts []string
	first := ""
	var last float64
	hasLast := false
	for i := range entries {
		e := &entries[i]
		switch e.Type {
		case layout.TypeSessionInfo:
			if n, ok := e.Field("name"); ok && truthy(n) {
				if s, ok := layout.String(n); ok {
					info.Name, info.HasName = jsTrim(s), true
				}
			}
			continue
		case layout.TypeMessage:
		default:
			continue
		}
		info.MessageCount++
		msg := e.Message()
		if msg == nil || (e.Role != "user" && e.Role != "assistant") {
			continue
		}
		var content, mts []byte
		var hasContent bool
		_ = layout.Members(msg, func(m *layout.Member) bool {
			switch {
			case m.KeyIs("content"):
				content, hasContent = m.Value, true
			case m.KeyIs("timestamp"):
				mts = m.Value
			}
			return true
		})
		r := e.Role
		if !hasContent {
			continue
		}
		if f, ok := layout.Number(mts); ok {
			if !hasLast || f > last {
				last, hasLast = f, true
			}
		} else if ms, ok := layout.ParseDate(e.Timestamp); ok && e.Timestamp != "" {
			if !hasLast || ms > last {
				last, hasLast = ms, true
			}
		}
		text := textOf(content)
		if text == "" {
			continue
		}
		texts = append(texts, text)
		if first == "" && r == "user" {
			first = text
		}
	}
	if first == "" {
		first = "(no messages)"
	}
	info.FirstMessage = first
	info.AllMessagesText = strings.Join(texts, " ")
	switch {
	case hasLast && last > 0:
		info.Modified = time.UnixMilli(int64(last)).UTC()
	case headerOK && layout.KindOf(ts) == layout.KindString:
		info.Modified = info.Created
	default:
		info.Modified = mtime.UTC()
	}
	return info
}

// dateValue is new Date(v).getTime() for a JSON value: strings parse,
// numbers are taken as milliseconds, a missing value is NaN.
func dateValue(v []byte, present bool) (float64, bool) {
	if !present {
		return 0, false
	}
	switch layout.KindOf(v) {
	case layout.KindString:
		s, _ := layout.String(v)
		return layout.ParseDate(s)
	case layout.KindNumber:
		f, _ := layout.Number(v)
		if f != f || f > 8.64e15 || f < -8.64e15 {
			return 0, false
		}
		return float64(int64(f)), true
	case layout.KindNull:
		return 0, true // new Date(null) is the epoch
	}
	return 0, false
}

// textOf is pi's extractTextContent: a string as is; for an array, the text
// of its "text" blocks joined with spaces.
func textOf(content []byte) string {
	switch layout.KindOf(content) {
	case layout.KindString:
		s, _ := layout.String(content)
		return s
	case layout.KindArray:
		var parts []string
		n := 0
		_ = layout.Elements(content, func(b []byte) bool {
			if layout.KindOf(b) != layout.KindObject {
				return true
			}
			var typ, text []byte
			_ = layout.Members(b, func(m *layout.Member) bool {
				switch {
				case m.KeyIs("type"):
					typ = m.Value
				case m.KeyIs("text"):
					text = m.Value
				}
				return true
			})
			if t, _ := layout.String(typ); t != "text" {
				return true
			}
			n++
			parts = append(parts, jsString(text))
			return true
		})
		if n == 0 {
			return ""
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// jsString is String(v) for how Array.prototype.join shows a value:
// strings as is, undefined and null as "", numbers and booleans as text.
func jsString(v []byte) string {
	switch layout.KindOf(v) {
	case layout.KindString:
		s, _ := layout.String(v)
		return s
	case layout.KindNumber:
		f, _ := layout.Number(v)
		return string(layout.AppendNumber(nil, f))
	case layout.KindBool:
		return string(v)
	case layout.KindArray, layout.KindObject:
		return "[object Object]"
	}
	return ""
}

// truthy reports JavaScript truthiness of a JSON value.
func truthy(v []byte) bool {
	switch layout.KindOf(v) {
	case layout.KindAbsent, layout.KindNull:
		return false
	case layout.KindBool:
		return v[0] == 't'
	case layout.KindString:
		return len(v) > 2
	case layout.KindNumber:
		f, _ := layout.Number(v)
		return f != 0 && f == f
	}
	return true
}

// FindMostRecent returns the session file in dir that pi's continueRecent
// would pick: among the *.jsonl files whose first line, read from their
// first 512 bytes, is a session header with a string id, the one with the
// newest mtime. ok is false when there is none. A nil fsys means
// layout.OS().
func FindMostRecent(fsys layout.FS, dir string) (path string, ok bool) {
	fsys = orOS(fsys)
	names, err := sessionFiles(fsys, dir)
	if err != nil {
		return "", false
	}
	var best string
	var bestTime time.Time
	for _, name := range names {
		if !headerInFirst512(fsys, name) {
			continue
		}
		st, err := fsys.Stat(name)
		if err != nil {
			continue
		}
		if best == "" || st.ModTime().After(bestTime) {
			best, bestTime = name, st.ModTime()
		}
	}
	return best, best != ""
}

func headerInFirst512(fsys layout.FS, name string) bool {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	if i := strings.IndexByte(string(buf), '\n'); i >= 0 {
		buf = buf[:i]
	}
	e, err := layout.ParseEntry(buf)
	return err == nil && e.IsHeader() && e.IDKind == layout.KindString
}

// ContinueRecent opens the most recent session of cwd's directory (see
// FindMostRecent) with cwd as its cwd, or creates a new session when there
// is none (pi's continueRecent).
func ContinueRecent(ctx context.Context, cwd string, opts Options) (*Session, error) {
	dir, err := opts.sessionDir(cwd)
	if err != nil {
		return nil, err
	}
	if path, ok := FindMostRecent(opts.fs(), dir); ok {
		o := opts
		o.Cwd = cwd
		o.Dir = dir
		return Open(ctx, path, o)
	}
	o := opts
	o.Dir = dir
	return Create(ctx, cwd, o)
}
