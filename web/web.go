package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/redact"
)

// DefaultStores returns the places of this machine that exist: pi's,
// indusagi's and AgentUse's (every project), in layout.MachinePlaces'
// order. Sessions imported from other agents are in pi's store. When none
// exists it returns pi's place alone, which then lists no sessions.
func DefaultStores() ([]layout.Place, error) {
	all, err := layout.MachinePlaces()
	if err != nil {
		return nil, err
	}
	var out []layout.Place
	for _, p := range all {
		if _, err := vfs.OS().Stat(p.Root); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = all[:1]
	}
	return out, nil
}

// Options configure New.
type Options struct {
	// Addr is the address the server listens on, as its listener
	// reports it ("127.0.0.1:43121"). Requests whose Host header names
	// anything else are refused (DNS rebinding); see New for the names
	// that are accepted. It is required.
	Addr string
	// Stores are the places shown, in this order (layout.ResolvePlaces
	// names them); nil means DefaultStores. A place's Name is what the
	// pages call it. A FormatJSONL place's session files are listed
	// recursively; a FormatAgentUse place's sessions are found at any
	// depth.
	Stores []layout.Place
	// Token is the secret every request must carry; "" draws a random
	// one (Handler.Token returns it). A token given here must be at
	// least 16 characters.
	Token string
	// BasePath is the path the handler is mounted at ("/sessions"), with
	// the prefix stripped before requests reach it (http.StripPrefix);
	// "" is the root. Links and the cookie's path use it.
	BasePath string
	// IndexDir is the search index directory; "" is the user cache
	// directory (search.Options.Dir).
	IndexDir string
	// CacheDir is where the engine keeps its caches (list and offset
	// indexes); "" is the user cache directory (engine.StoreOptions).
	CacheDir string
	// Command is recorded in the owner record of the writer locks the
	// handler's acts take; "" is "sessctl serve".
	Command string
	// ListMaxAge is how old the listing may be before a page that shows
	// it starts reading the stores again (in the background: the page is
	// served from the listing at hand); 0 means 10 seconds. Acts that
	// create or rename a session refresh it at once.
	ListMaxAge time.Duration
	// FollowInterval is how often a live page's session file is looked
	// at for appended entries; 0 means 250 ms.
	FollowInterval time.Duration
	// DamagedHint, when set, is shown on the page of a session that
	// cannot be read because its file is damaged or of a newer format
	// version: what the user can do about it (the embedding program's
	// own commands).
	DamagedHint string
	// Logf, when set, is told of errors the handler meets that no page
	// shows (a failed write to a client, a store that could not be read
	// in the background).
	Logf func(format string, args ...any)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FS is the filesystem the stores' files are looked at and read
	// through (the engine's and the search's too); nil means vfs.OS().
	// Writer locks are kernel locks and the search index is SQLite's, so
	// for a viewer that acts or searches it must be the real filesystem
	// or a wrapper of it (vfstest.FaultFS).
	FS vfs.FS

	// leanMin is the file size from which a session page keeps message
	// entries detached (read back by page); tests lower it.
	leanMin int64
	// holderEvery is how often a watched session is looked at for a
	// change of its writer (0: a second), holderRecheck how often a
	// held lock is probed again though nothing changed (0: 10 s); tests
	// set them.
	holderEvery, holderRecheck time.Duration
}

// Handler is the viewer: an http.Handler. It is safe for concurrent use.
type Handler struct {
	o      Options
	stores []*storeRef
	token  string
	cookie string // the cookie's name: sessctl-<port>
	secret string // the cookie's value, drawn by New: never the token
	csrf   string
	hosts  hostRule
	base   string // BasePath without a trailing slash
	mux    *http.ServeMux
	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup
	list   *lister
	views  *viewCache
	usage  *usageTable
	prov   *provCache
	search searcher
	// holders are the sessions whose writer live pages watch.
	holders holderHub
	// redactor masks exports (a field so that tests can make redaction
	// fail).
	redactor render.Redactor
	// lookups counts the lookups of who writes a session (lock.Inspect,
	// lock.FileWriters), holderChecks the looks at a session for a
	// change of its writer; tests read them.
	lookups, holderChecks atomic.Int64
}

// storeRef is one configured store.
type storeRef struct {
	layout.Place
	key  string // its name in URLs: pi, indusagi, agentuse, d1, d2...
	root string // Root, absolute and clean
	real string // root with symbolic links resolved ("" when it does not exist yet)
	fs   vfs.FS // Options.FS
}

// New returns the viewer of the stores o names.
//
// Host headers accepted: o.Addr itself; "localhost" with its port when
// it is a loopback address; and, when it is an unspecified address
// (0.0.0.0, [::]), any IP address with its port: a DNS name other than
// localhost is never accepted, so a page of another site cannot reach
// the server by making its own name resolve to it.
func New(o Options) (*Handler, error) {
	if o.Addr == "" {
		return nil, errors.New("web: Options.Addr is required (the address the server listens on)")
	}
	hr, err := parseHostRule(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("web: Options.Addr %q: %w", o.Addr, err)
	}
	if o.Stores == nil {
		if o.Stores, err = DefaultStores(); err != nil {
			return nil, err
		}
	}
	if o.Token == "" {
		o.Token = randomHex(24)
	} else if len(o.Token) < 16 {
		return nil, errors.New("web: Options.Token must be at least 16 characters")
	}
	if o.Command == "" {
		o.Command = "sessctl serve"
	}
	if o.ListMaxAge <= 0 {
		o.ListMaxAge = 10 * time.Second
	}
	if o.FollowInterval <= 0 {
		o.FollowInterval = 250 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	if o.holderEvery <= 0 {
		o.holderEvery = time.Second
	}
	if o.holderRecheck <= 0 {
		o.holderRecheck = 10 * time.Second
	}
	if o.leanMin <= 0 {
		o.leanMin = 8 << 20
	}
	// The cookie's value is a secret of this handler's, not the token:
	// browsers send a cookie of 127.0.0.1 to every port of it, so another
	// local server may read it; what it reads then is worth nothing after
	// this handler is gone, and the token (in a script, a config) never
	// leaves in a cookie. Its name holds the port, so that viewers on
	// other ports neither read nor replace each other's.
	h := &Handler{o: o, token: o.Token, secret: randomHex(32), csrf: randomHex(16), hosts: hr, redactor: redact.Rules{},
		base: strings.TrimSuffix(o.BasePath, "/")}
	h.cookie = "sessctl-" + hr.port
	dirs := 0
	seen := map[string]bool{}
	for _, st := range o.Stores {
		abs, err := filepath.Abs(st.Root)
		if err != nil {
			return nil, fmt.Errorf("web: store %s: %w", st.Root, err)
		}
		ref := &storeRef{Place: st, root: filepath.Clean(abs), fs: o.FS}
		switch st.Name {
		case layout.PlacePi, layout.PlaceIndusagi, layout.PlaceAgentUse:
			ref.key = st.Name // a machine place's name
		}
		if ref.key == "" || seen[ref.key] {
			dirs++
			ref.key = fmt.Sprintf("d%d", dirs)
		}
		seen[ref.key] = true
		ref.real = realPath(ref.root)
		h.stores = append(h.stores, ref)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.list = newLister(h)
	h.views = newViewCache(8, h.fs(), h.openView)
	h.usage = newUsageTable(h)
	h.prov = newProvCache(h.fs())
	h.mux = h.routes()
	return h, nil
}

// Token returns the token every request must carry.
func (h *Handler) Token() string { return h.token }

// URL returns the address to open in a browser: the handler's root on
// Options.Addr, with the token.
func (h *Handler) URL() string {
	return "http://" + h.o.Addr + h.base + "/?token=" + h.token
}

// Close stops what the handler runs in the background (live pages'
// follows, listing and counting), waits for it, and closes the search
// index the handler keeps open between searches. Requests served after
// Close fail.
func (h *Handler) Close() error {
	h.cancel()
	h.bg.Wait()
	h.views.closeAll()
	return h.closeSearch()
}

// logf reports an error no page shows.
func (h *Handler) logf(format string, args ...any) {
	if h.o.Logf != nil {
		h.o.Logf(format, args...)
	}
}

// goBG runs f in the background until Close.
func (h *Handler) goBG(f func()) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		f()
	}()
}

// path returns the handler's URL path of p ("/s/pi/x" under BasePath).
func (h *Handler) path(p string) string { return h.base + p }

// storeByKey returns the configured store named key in URLs.
func (h *Handler) storeByKey(key string) *storeRef {
	for _, s := range h.stores {
		if s.key == key {
			return s
		}
	}
	return nil
}

// jsonlStore returns an engine store for the session files of dir, with
// the handler's options.
func (h *Handler) jsonlStore(dir string) *engine.Store {
	st, err := engine.OpenStore(h.ctx, engine.StoreOptions{Dir: dir, CacheDir: h.o.CacheDir, Command: h.o.Command, FS: h.o.FS})
	if err != nil {
		// OpenStore fails only resolving an agent's directory, which a
		// store on a directory never does.
		panic("web: a store on a directory: " + err.Error())
	}
	return st
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("web: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// realPath returns p with symbolic links resolved, "" when it cannot be.
func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// errOutside is the error for a path outside every store.
var errOutside = errors.New("not a session of the viewer's stores")

// sessionPath returns the file (FormatJSONL) or directory
// (FormatAgentUse) that rel names in the store, after checking that it
// is one the store's walk yields as its own (engine.Store.Files, without
// Link; the AgentUse walk, which follows no link): a clean relative path,
// not in a trash directory, every element of which below the store's
// directory is a directory or file of its own, never a symbolic link
// (whether it points into .trash, elsewhere in the store or out of it);
// a session file must be a regular *.jsonl file, an AgentUse session a
// directory holding a regular session.json. The store's directory itself
// may be a link; the path is checked to stay inside it, with every link
// resolved, all the same.
func (s *storeRef) sessionPath(rel string, format layout.Format) (string, error) {
	if s.Format != format || rel == "" || strings.ContainsRune(rel, 0) || strings.Contains(rel, "\\") {
		return "", errOutside
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) || filepath.VolumeName(clean) != "" {
		return "", errOutside
	}
	els := strings.Split(clean, string(filepath.Separator))
	for _, el := range els {
		if el == sessionfile.TrashDirName {
			return "", errOutside
		}
	}
	if format == layout.FormatJSONL && !layout.IsSessionFileName(els[len(els)-1]) {
		return "", errOutside
	}
	// Element by element, as the walk goes: a link is not followed.
	p := s.root
	for i, el := range els {
		p = filepath.Join(p, el)
		fi, err := s.fs.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%s: %w", p, engine.ErrNotFound)
			}
			return "", err
		}
		last := i == len(els)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", errOutside
		case !last && !fi.IsDir():
			return "", errOutside
		case last && format == layout.FormatJSONL && !fi.Mode().IsRegular():
			return "", errOutside
		case last && format == layout.FormatAgentUse && !fi.IsDir():
			return "", errOutside
		}
	}
	if format == layout.FormatAgentUse {
		fi, err := s.fs.Lstat(filepath.Join(p, layout.AgentUseSessionFile))
		if err != nil || !fi.Mode().IsRegular() {
			return "", errOutside
		}
	}
	root := s.real
	if root == "" {
		root = realPath(s.root)
	}
	if real := realPath(p); real == "" || !within(real, root) {
		return "", errOutside // the store's directory changed under us
	}
	return p, nil
}

// serves reports whether p (a session file or an AgentUse session
// directory) is a session the handler serves: sessionPath of its place in
// a store of its format.
func (h *Handler) serves(p string, format layout.Format) bool {
	for _, s := range h.stores {
		if s.Format != format {
			continue
		}
		if rel, ok := s.relOf(p); ok {
			if _, err := s.sessionPath(rel, format); err == nil {
				return true
			}
		}
	}
	return false
}

// relOf returns p relative to the store's directory with '/', or false
// when p is not inside it.
func (s *storeRef) relOf(p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	if !within(abs, s.root) || abs == s.root {
		return "", false
	}
	rel, err := filepath.Rel(s.root, abs)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// sessionURL returns the page of the session at p (a session file or an
// AgentUse session directory), "" when no store holds it.
func (h *Handler) sessionURL(p string, format layout.Format) string {
	for _, s := range h.stores {
		if s.Format != format {
			continue
		}
		if rel, ok := s.relOf(p); ok {
			prefix := "/s/"
			if format == layout.FormatAgentUse {
				prefix = "/a/"
			}
			return h.path(prefix + s.key + "/" + escapeRel(rel))
		}
	}
	return ""
}

// isLoopback reports whether the address (host:port) is a loopback one.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port) names a loopback address,
// reachable from this machine only.
func IsLoopback(addr string) bool { return isLoopback(addr) }

// statKey identifies a file's state for the caches: size, time, inode.
type statKey struct {
	size  int64
	mtime int64
	ino   uint64
}

func keyOf(fi fs.FileInfo) statKey {
	return statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: vfs.FileID(fi)}
}
