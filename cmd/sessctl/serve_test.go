package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/testenv"
)

// lineWriter hands the lines written to it to a channel.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		s := w.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		select {
		case w.lines <- s[:i]:
		default:
		}
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}

// startServe runs 'sessctl serve' with args in-process, and returns the
// URL it printed, a client logged in with it, and a stop function that
// returns the exit code and stderr.
func startServe(t *testing.T, args ...string) (string, *http.Client, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 16)}
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--index-dir", filepath.Join(t.TempDir(), "index")}, args...), strings.NewReader(""), out, &errb)
	}()
	var url string
	select {
	case line := <-out.lines:
		url = regexp.MustCompile(`http://\S+`).FindString(line)
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d: %s", code, errb.String())
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve printed no URL")
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	stopped := false
	stop := func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code, errb.String()
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
		}
		return -1, ""
	}
	t.Cleanup(func() { stop() })
	return url, c, stop
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func getBody(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeTheDemoStore is what README tells a newcomer to do: 'sessctl
// demo --keep', then 'sessctl serve --store' on the store it kept.
func TestServeTheDemoStore(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	out, errOut, code := runCLI(t, "demo", "--keep")
	if code != 0 {
		t.Fatalf("demo: %d %s", code, errOut)
	}
	m := regexp.MustCompile(`The store is kept at (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("demo names no store:\n%s", out)
	}
	store := filepath.Join(m[1], "agent", "sessions")
	if !strings.Contains(out, "sessctl serve --store "+human.ShellQuote(store)) {
		t.Errorf("demo does not say how to browse the store:\n%s", out)
	}
	url, c, stop := startServe(t, "--store", store)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("URL %q", url)
	}
	base := strings.SplitN(url, "/?", 2)[0]
	// Without the token: refused.
	if code, _ := getBody(t, &http.Client{}, base+"/"); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	code, list := getBody(t, c, url)
	if code != http.StatusOK || !strings.Contains(list, "fix the main build") {
		t.Fatalf("list: %d\n%s", code, list)
	}
	link := regexp.MustCompile(`href="(/s/[^"]+)"`).FindStringSubmatch(list)
	if link == nil {
		t.Fatal("the list links to no session")
	}
	code, page := getBody(t, c, base+link[1])
	for _, want := range []string{"Found a missing import in layout/codec.go.", "found the cause", "Fix it and add a test."} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the demo session's page (%d) lacks %q", code, want)
		}
	}
	// A damaged file beside the demo session: its page words what to do
	// with sessctl's commands.
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("demo sessions: %v", files)
	}
	bad := filepath.Join(filepath.Dir(files[0]), "2026-03-01T09-00-00-000Z_bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"type":"message","id":"a1","parentId":null}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badLink := link[1][:strings.LastIndex(link[1], filepath.Base(files[0]))] + filepath.Base(bad)
	if code, page := getBody(t, c, base+badLink); code != http.StatusUnprocessableEntity || !strings.Contains(page, "sessctl repair FILE") {
		t.Errorf("a damaged session's page (%d) does not hint at sessctl repair:\n%s", code, page)
	}
	code, errText := stop()
	if code != exitOK || !strings.Contains(errText, "sessctl serve: stopped") {
		t.Errorf("stop: exit %d, %q", code, errText)
	}
}

// TestServeAPiStore serves a store pi itself wrote (its SessionManager,
// random sessions with branches, labels and compactions), found as pi's
// store from the environment, without --store.
func TestServeAPiStore(t *testing.T) {
	node, modules := testenv.Pi(t)
	agent := filepath.Join(t.TempDir(), "agent")
	dir := filepath.Join(agent, "sessions", "--w-pi--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := testenv.PiGenerate(t, node, modules, dir, 33, 6)
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	t.Setenv("INDUSAGI_AGENT_DIR", filepath.Join(t.TempDir(), "none"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "none"))
	url, c, _ := startServe(t)
	base := strings.SplitN(url, "/?", 2)[0]
	var list string
	for range 100 {
		if _, list = getBody(t, c, url); strings.Count(list, `<td class="when"`) == len(files) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	links := regexp.MustCompile(`href="(/s/pi/[^"]+)"`).FindAllStringSubmatch(list, -1)
	if len(links) != len(files) {
		t.Fatalf("the list shows %d sessions of pi's %d:\n%s", len(links), len(files), list)
	}
	for _, l := range links {
		code, page := getBody(t, c, base+l[1])
		if code != http.StatusOK || !strings.Contains(page, `class="treelines"`) {
			t.Errorf("%s: %d", l[1], code)
		}
	}
}

func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "extra"}, exitUsage, "unexpected argument"},
		{[]string{"serve", "--store", filepath.Join(t.TempDir(), "nosuch")}, exitNotFound, "session store"},
		{[]string{"serve", "--addr", "not an address"}, exitFailure, "listen on not an address"},
		{[]string{"serve", "--nosuchflag"}, exitUsage, "flag provided but not defined"},
	} {
		_, errOut, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	out, _, code := runCLI(t, "help", "serve")
	if code != 0 || !strings.Contains(out, "Usage: sessctl serve") || !strings.Contains(out, "--addr") {
		t.Errorf("help serve: %d\n%s", code, out)
	}
}

// outsideAddr returns an address of this machine that is not loopback,
// or "" when it has none.
func outsideAddr() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestServeBindsLoopbackByDefault: without --addr the viewer listens on
// 127.0.0.1 only (this machine's other addresses are refused) and says
// nothing; on another address it warns.
func TestServeBindsLoopbackByDefault(t *testing.T) {
	store := t.TempDir()
	u, c, stop := startServe(t, "--store", store)
	pu, err := neturl.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if pu.Hostname() != "127.0.0.1" {
		t.Fatalf("serve listens on %s", pu.Host)
	}
	if code, _ := getBody(t, c, u); code != http.StatusOK {
		t.Errorf("the printed URL: %d", code)
	}
	if ip := outsideAddr(); ip != "" {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, pu.Port()), 5*time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("the viewer is reachable on %s", net.JoinHostPort(ip, pu.Port()))
		}
	} else {
		t.Log("this machine has no address but loopback: only the printed address is checked")
	}
	if code, errText := stop(); code != exitOK || strings.Contains(errText, "not a loopback address") {
		t.Errorf("stop: exit %d, %q", code, errText)
	}

	u, c, stop = startServe(t, "--store", store, "--addr", "0.0.0.0:0")
	if code, _ := getBody(t, c, u); code != http.StatusOK {
		t.Errorf("the printed URL on 0.0.0.0: %d", code)
	}
	if _, errText := stop(); !strings.Contains(errText, "which is not a loopback address") {
		t.Errorf("no warning on 0.0.0.0: %q", errText)
	}
}
