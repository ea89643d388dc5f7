package search

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/sessctl/sessctl/layout"
)

// ServerOptions are a search server's (Listen).
type ServerOptions struct {
	// Stores are the stores whose searches it answers; a search of any
	// other store is refused, and its client searches by itself.
	Stores []layout.Place
	// Dir is the index directory, as Options.Dir ("" is the default).
	// The socket's name follows from it: a client finds the server of
	// the index it would use.
	Dir string
	// SocketDir is the private directory the socket is made in; ""
	// means $XDG_RUNTIME_DIR/sessctl, or <sessctl's cache
	// directory>/run where XDG_RUNTIME_DIR is not set. It is made 0700
	// and refused when it is a symbolic link, is not the user's or is
	// open to others.
	SocketDir string
}

// Server answers searches over a private unix socket (Linux only: on
// other systems Listen fails and clients search by themselves), from an
// index kept open with a watch on the stores' directories (Options.Watch)
// for each engine and set of stores asked for: a search that finds no
// event since the last one found the index current only queries the
// index. Pending events are read when a search begins, and the kernel
// queues an event before the write that caused it returns, so a line
// written before the search was asked for is found.
type Server struct {
	o      ServerOptions
	dir    string
	stores []sockPlace
	hello  []byte
	ln     net.Listener
	path   string
	ctx    context.Context
	cancel context.CancelFunc
	conns  sync.WaitGroup

	mu     sync.Mutex
	served map[string]*servedIndex
	closed bool // Close has begun: no connection is handled after
}

// servedIndex is a kept, watched index: one search at a time uses it.
type servedIndex struct {
	mu       sync.Mutex
	x        *Index
	warn     func(error)
	progress func(done, total int64)
}

// maxServed bounds the kept indexes; a search of another engine or set of
// stores beyond them uses an index of its own.
const maxServed = 8

// Listen makes the socket of the search server for o.Dir. It fails when
// the socket directory is not private, when another server answers on
// the socket already, and on systems without the socket (not Linux).
func Listen(o ServerOptions) (*Server, error) {
	dir, err := resolveDir(o.Dir)
	if err != nil {
		return nil, err
	}
	stores, err := sockPlaces(o.Stores, true)
	if err != nil {
		return nil, err
	}
	sockDir := o.SocketDir
	if sockDir == "" {
		if sockDir, err = defaultSocketDir(); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(sockDir, sockName(dir))
	hello, err := json.Marshal(sockHello{Proto: sockProto, V: sockVersion, Dir: wstr(dir), Stores: stores})
	if err != nil {
		return nil, err
	}
	ln, err := listenSock(sockDir, path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{o: o, dir: dir, stores: stores, hello: append(hello, '\n'), ln: ln, path: path, ctx: ctx, cancel: cancel,
		served: map[string]*servedIndex{}}, nil
}

// resolveDir returns the index directory dir names, absolute.
func resolveDir(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = defaultDir(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// sockName is the socket's name for the index directory dir.
func sockName(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "search-" + hex.EncodeToString(sum[:8]) + ".sock"
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.path }

// Serve answers searches until Close, when it returns nil.
func (s *Server) Serve() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("search server %s: %w", s.path, err)
		}
		// Counted under mu, so that Close's Wait never races an Add: a
		// connection accepted as Close begins is closed unanswered.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.conns.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.conns.Done()
			s.handle(c)
		}()
	}
}

// Close stops the server: it removes the socket, ends the searches
// under way and closes the kept indexes.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	err := s.ln.Close()
	s.conns.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.served {
		v.mu.Lock()
		if cerr := v.x.Close(); err == nil {
			err = cerr
		}
		v.mu.Unlock()
		delete(s.served, k)
	}
	return err
}

// sockWriter writes an answer's messages, from the search and from the
// keepalive ticker.
type sockWriter struct {
	mu  sync.Mutex
	c   net.Conn
	w   *bufio.Writer
	err error
}

func (w *sockWriter) send(m sockMsg, flush bool) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	_ = w.c.SetWriteDeadline(time.Now().Add(time.Minute))
	_, w.err = w.w.Write(append(b, '\n'))
	if w.err == nil && flush {
		w.err = w.w.Flush()
	}
	return w.err
}

func (s *Server) handle(c net.Conn) {
	defer c.Close()
	if !peerIsUs(c) {
		return
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(s.hello); err != nil {
		return
	}
	line, err := bufio.NewReader(io.LimitReader(c, maxSockRequest)).ReadBytes('\n')
	if err != nil {
		return // too long, cut or not sent
	}
	_ = c.SetDeadline(time.Time{})
	w := &sockWriter{c: c, w: bufio.NewWriterSize(c, 64<<10)}
	var req sockRequest
	if err := json.Unmarshal(line, &req); err != nil || req.V != sockVersion {
		_ = w.send(sockMsg{T: "refuse", Msg: "a request this server cannot read"}, true)
		return
	}
	engine, err := ParseEngine(req.Engine)
	stores := make([]layout.Place, 0, len(req.Stores))
	for _, p := range req.Stores {
		pl, ok := p.place()
		if !ok {
			err = errors.New("unknown format")
		}
		stores = append(stores, pl)
	}
	if err != nil || !covers(s.stores, req.Stores) {
		_ = w.send(sockMsg{T: "refuse", Msg: "not a store of this server"}, true)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go func() { // the client went away, or Close: the search ends
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	s.answer(ctx, w, engine, req.Query.query(stores))
}

// answer runs the search and sends its messages, with a "wait" every
// second so that the client knows the server is at work.
func (s *Server) answer(ctx context.Context, w *sockWriter, engine Engine, q Query) {
	tick := time.NewTicker(time.Second)
	done := make(chan struct{})
	defer func() {
		tick.Stop()
		close(done)
	}()
	go func() {
		for {
			select {
			case <-tick.C:
				_ = w.send(sockMsg{T: "wait"}, true)
			case <-done:
				return
			}
		}
	}()
	warn := func(err error) { _ = w.send(sockMsg{T: "warn", Msg: wstr(err.Error())}, false) }
	progress := func(d, t int64) { _ = w.send(sockMsg{T: "prog", Done: d, Total: t}, true) }
	x, release, err := s.index(ctx, engine, q.Stores, warn, progress)
	if err != nil {
		_ = w.send(errMsg(err), true)
		return
	}
	defer release()
	first := true
	for h, err := range x.Search(ctx, q) {
		if err != nil {
			_ = w.send(errMsg(err), true)
			return
		}
		if w.send(sockMsg{T: "hit", Hit: toSockHit(&h)}, first) != nil {
			return
		}
		first = false
	}
	_ = w.send(sockMsg{T: "end"}, true)
}

// index returns the kept index of engine and stores for one search, or,
// when it is in use (or there are maxServed already), an index of the
// search's own.
func (s *Server) index(ctx context.Context, engine Engine, stores []layout.Place, warn func(error), progress func(d, t int64)) (*Index, func(), error) {
	key := engine.String() + "\x00" + storesKey(stores)
	s.mu.Lock()
	v := s.served[key]
	if v == nil && len(s.served) < maxServed && s.ctx.Err() == nil {
		v = &servedIndex{}
		x, err := Open(ctx, Options{Dir: s.dir, Engine: engine, Watch: true,
			Warn: func(err error) {
				if v.warn != nil {
					v.warn(err)
				}
			},
			Progress: func(d, t int64) {
				if v.progress != nil {
					v.progress(d, t)
				}
			}})
		if err != nil {
			s.mu.Unlock()
			return nil, nil, err
		}
		v.x = x
		s.served[key] = v
	}
	s.mu.Unlock()
	if v != nil && v.mu.TryLock() {
		v.warn, v.progress = warn, progress
		return v.x, func() {
			v.warn, v.progress = nil, nil
			v.mu.Unlock()
		}, nil
	}
	x, err := Open(ctx, Options{Dir: s.dir, Engine: engine, Warn: warn, Progress: progress})
	if err != nil {
		return nil, nil, err
	}
	return x, func() { _ = x.Close() }, nil
}
