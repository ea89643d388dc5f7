package search

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
)

// startServer runs a search server of stores with the index in idx and
// its socket in a new private directory, which it returns.
func startServer(t *testing.T, idx string, stores []layout.Place) (*Server, string) {
	t.Helper()
	sd := filepath.Join(t.TempDir(), "run")
	s, err := Listen(ServerOptions{Stores: stores, Dir: idx, SocketDir: sd})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return s, sd
}

// askAll asks the server in sd, reporting whether it answered, and its
// hits and warnings.
func askAll(t *testing.T, o Options, sd string, q Query) (hits []Hit, warns []string, ok bool, err error) {
	t.Helper()
	o.Warn = func(err error) { warns = append(warns, err.Error()) }
	seq, ok := ask(context.Background(), o, sd, q)
	if !ok {
		return nil, nil, false, nil
	}
	for h, err := range seq {
		if err != nil {
			return hits, warns, true, err
		}
		hits = append(hits, h)
	}
	return hits, warns, true, nil
}

// localAll is the same search in this process.
func localAll(t *testing.T, o Options, q Query) (hits []Hit, warns []string, err error) {
	t.Helper()
	o.Warn = func(err error) { warns = append(warns, err.Error()) }
	x := openIndex(t, o)
	for h, err := range x.Search(context.Background(), q) {
		if err != nil {
			return hits, warns, err
		}
		hits = append(hits, h)
	}
	return hits, warns, nil
}

// TestSockSameHits: what the server answers is what the search finds by
// itself, field for field, for queries with every filter, a subset of
// the server's stores, both engines, and a file that cannot be read.
func TestSockSameHits(t *testing.T) {
	root, _, _ := fixtureStore(t)
	other := filepath.Join(t.TempDir(), "other")
	writeLines(t, filepath.Join(other, "2026-03-07T10-00-00-000Z_s7-0000.jsonl"), []string{header("s7-0000", "/srv/x", "2026-03-07T10:00:00.000Z"),
		userLine("o1", "", "2026-03-07T10:00:01.000Z", "flaky migration on \xff\xfe bytes")})
	if err := syscall.Mkfifo(filepath.Join(other, "pipe.jsonl"), 0o600); err != nil {
		t.Skip(err)
	}
	idx := filepath.Join(t.TempDir(), "index")
	both := append(dirPlaces(root), dirPlaces(other)...)
	_, sd := startServer(t, idx, both)
	since := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	queries := []Query{
		{Text: "flaky", Stores: both},
		{Text: "flaky OR migration", Stores: both, Limit: 1},
		{Text: "flaky", Stores: dirPlaces(root)},
		{Text: "flaky", Stores: both, Since: since},
		{Text: "flaky", Stores: both, Until: since, Role: RoleUser},
		{Text: "bash", Stores: both, Tool: "bash"},
		{Text: "flaky", Stores: both, Cwd: "/srv"},
		{Text: "nothingmatchesthis", Stores: both},
	}
	for _, engine := range []Engine{EngineOwn, EngineFTS5} {
		for _, q := range queries {
			o := Options{Dir: idx, Engine: engine}
			for round := range 2 { // the first walks, the second may only query
				got, gotWarns, ok, err := askAll(t, o, sd, q)
				if !ok || err != nil {
					t.Fatalf("%v %+v: asked %v, %v", engine, q, ok, err)
				}
				want, wantWarns, err := localAll(t, o, q)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%v %+v round %d (-self +server):\n%s", engine, q, round, d)
				}
				if d := cmp.Diff(wantWarns, gotWarns); d != "" {
					t.Errorf("%v %+v round %d warnings (-self +server):\n%s", engine, q, round, d)
				}
			}
		}
	}
}

// TestSockFreshAfterAppend: a line appended just before the search is
// asked for is found, round after round (the watch's events are read
// before the server decides its index is current).
func TestSockFreshAfterAppend(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	idx := filepath.Join(t.TempDir(), "index")
	_, sd := startServer(t, idx, dirPlaces(root))
	o := Options{Dir: idx}
	rounds := 200
	if testing.Short() {
		rounds = 30
	}
	parent := "n1"
	for i := range rounds {
		w := fmt.Sprintf("wombat%dq", i)
		id := fmt.Sprintf("w%d", i)
		appendLines(t, s1, userLine(id, parent, "2026-03-01T10:00:00.000Z", w))
		parent = id
		hits, _, ok, err := askAll(t, o, sd, Query{Text: w, Stores: dirPlaces(root)})
		if !ok || err != nil {
			t.Fatalf("round %d: asked %v, %v", i, ok, err)
		}
		if len(hits) != 1 || hits[0].Entry != id {
			t.Fatalf("round %d: %d hits for %s, want the line just appended", i, len(hits), w)
		}
	}
}

// TestSockNotUsed: a server of other stores, of another index, a query
// the server fails on, a relative store root and a stale socket file
// send the client back to its own search.
func TestSockNotUsed(t *testing.T) {
	root, _, _ := fixtureStore(t)
	other := filepath.Join(t.TempDir(), "other")
	writeLines(t, filepath.Join(other, "2026-03-07T10-00-00-000Z_s7-0000.jsonl"), []string{header("s7-0000", "/srv/x", "2026-03-07T10:00:00.000Z")})
	idx := filepath.Join(t.TempDir(), "index")
	_, sd := startServer(t, idx, dirPlaces(root))
	for _, c := range []struct {
		what string
		o    Options
		q    Query
	}{
		{"other store", Options{Dir: idx}, Query{Text: "flaky", Stores: dirPlaces(other)}},
		{"a store more", Options{Dir: idx}, Query{Text: "flaky", Stores: append(dirPlaces(root), dirPlaces(other)...)}},
		{"other index", Options{Dir: idx + "2"}, Query{Text: "flaky", Stores: dirPlaces(root)}},
		{"bad query", Options{Dir: idx}, Query{Text: `"flaky`, Stores: dirPlaces(root)}},
		{"no index", Options{Dir: idx, NoIndex: true}, Query{Text: "flaky", Stores: dirPlaces(root)}},
		{"rebuild", Options{Dir: idx, Rebuild: true}, Query{Text: "flaky", Stores: dirPlaces(root)}},
		{"relative root", Options{Dir: idx}, Query{Text: "flaky", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: "sessions"}}}},
	} {
		if _, _, ok, _ := askAll(t, c.o, sd, c.q); ok {
			t.Errorf("%s: the server answered", c.what)
		}
	}
	// A socket file no server listens on.
	stale := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(stale, sockName(idx))
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, stale, Query{Text: "flaky", Stores: dirPlaces(root)}); ok {
		t.Error("stale socket: answered")
	}
	// A server takes the stale socket's place.
	s, err := Listen(ServerOptions{Stores: dirPlaces(root), Dir: idx, SocketDir: stale})
	if err != nil {
		t.Fatalf("listen in place of a stale socket: %v", err)
	}
	go s.Serve()
	defer s.Close()
	if hits, _, ok, err := askAll(t, Options{Dir: idx}, stale, Query{Text: "flaky", Stores: dirPlaces(root)}); !ok || err != nil || len(hits) == 0 {
		t.Errorf("server on the stale socket's place: asked %v, %v, %d hits", ok, err, len(hits))
	}
	// A second server of the same index does not take the live one's socket.
	if s2, err := Listen(ServerOptions{Stores: dirPlaces(root), Dir: idx, SocketDir: stale}); err == nil {
		s2.Close()
		t.Error("a second server took the socket of a live one")
	}
}

// TestSockNotPrivate: a socket directory open to others, a symbolic link
// to one, and a socket open to others are refused by both ends.
func TestSockNotPrivate(t *testing.T) {
	root, _, _ := fixtureStore(t)
	idx := filepath.Join(t.TempDir(), "index")
	q := Query{Text: "flaky", Stores: dirPlaces(root)}

	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := Listen(ServerOptions{Stores: dirPlaces(root), Dir: idx, SocketDir: open}); err == nil {
		s.Close()
		t.Error("listened in a directory open to others")
	}
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if s, err := Listen(ServerOptions{Stores: dirPlaces(root), Dir: idx, SocketDir: link}); err == nil {
		s.Close()
		t.Error("listened in a symbolic link to a directory")
	}

	s, sd := startServer(t, idx, dirPlaces(root))
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, sd, q); !ok {
		t.Fatal("private server not asked")
	}
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, link, q); ok {
		t.Error("asked through a symbolic link") // (link's target has no socket either way)
	}
	if err := os.Symlink(sd, link+"2"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, link+"2", q); ok {
		t.Error("asked through a symbolic link to the server's directory")
	}
	if err := os.Chmod(sd, 0o711); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, sd, q); ok {
		t.Error("asked through a directory open to others")
	}
	if err := os.Chmod(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := askAll(t, Options{Dir: idx}, sd, q); ok {
		t.Error("asked a socket open to others")
	}
	if os.Geteuid() == 0 { // another user's socket directory
		if err := os.Chmod(s.Path(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(sd, 1, 1); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := askAll(t, Options{Dir: idx}, sd, q); ok {
			t.Error("asked through another user's directory")
		}
		if err := os.Chown(sd, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeFileInfo is a directory of another user.
type fakeFileInfo struct{ fs.FileInfo }

func (fakeFileInfo) Mode() fs.FileMode { return fs.ModeDir | 0o700 }
func (fakeFileInfo) Sys() any          { return &syscall.Stat_t{Uid: uint32(os.Geteuid() + 1)} }

func TestCheckPrivateOtherUser(t *testing.T) {
	if err := checkPrivate("d", fakeFileInfo{}, fs.ModeDir); err == nil {
		t.Error("another user's directory is private")
	}
}

// fakeServer listens in a new private directory on the socket of idx
// and runs serve on each connection.
func fakeServer(t *testing.T, idx string, serve func(c net.Conn)) string {
	t.Helper()
	sd := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := listenSock(sd, filepath.Join(sd, sockName(idx)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return sd
}

// TestSockProtocol: a server of another version, one that never says
// hello, and one that refuses are not used; a request line too long is
// cut off by the server.
func TestSockProtocol(t *testing.T) {
	root, _, _ := fixtureStore(t)
	idx, err := filepath.Abs(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	places, _ := sockPlaces(dirPlaces(root), true)
	q := Query{Text: "flaky", Stores: dirPlaces(root)}
	hello := func(v int) []byte {
		b, _ := json.Marshal(sockHello{Proto: sockProto, V: v, Dir: wstr(idx), Stores: places})
		return append(b, '\n')
	}
	for what, serve := range map[string]func(net.Conn){
		"other version": func(c net.Conn) { c.Write(hello(sockVersion + 1)); io.Copy(io.Discard, c) },
		"no hello":      func(c net.Conn) { io.Copy(io.Discard, c) },
		"refuses": func(c net.Conn) {
			c.Write(hello(sockVersion))
			bufio.NewReader(c).ReadBytes('\n')
			c.Write([]byte(`{"t":"wait"}` + "\n" + `{"t":"warn","msg":"x"}` + "\n" + `{"t":"refuse","msg":"no"}` + "\n"))
		},
		"goes away": func(c net.Conn) {
			c.Write(hello(sockVersion))
			bufio.NewReader(c).ReadBytes('\n')
		},
	} {
		sd := fakeServer(t, idx, serve)
		if _, warns, ok, _ := askAll(t, Options{Dir: idx}, sd, q); ok || len(warns) != 0 {
			t.Errorf("%s: asked %v, warnings %q", what, ok, warns)
		}
	}

	s, sd := startServer(t, idx, dirPlaces(root))
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := r.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	go c.Write([]byte(strings.Repeat("x", maxSockRequest+10)))
	if rest, err := io.ReadAll(r); err != nil && !errors.Is(err, syscall.ECONNRESET) || len(rest) != 0 {
		t.Errorf("after a request too long: %q, %v; want the connection closed", rest, err)
	}
	_ = sd
}

// TestWstr: strings that are not UTF-8 cross the wire byte for byte.
func TestWstr(t *testing.T) {
	for _, s := range []string{"", "plain", "\xff\xfe", "a\u2028b<&>", "é\x80"} {
		b, err := json.Marshal(wstr(s))
		if err != nil {
			t.Fatal(err)
		}
		var got wstr
		if err := json.Unmarshal(b, &got); err != nil || string(got) != s {
			t.Errorf("%q: %s -> %q, %v", s, b, got, err)
		}
	}
}
