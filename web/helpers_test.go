package web

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// server is a handler on a loopback test server, with a client that has
// logged in (its cookie jar holds the token's cookie).
type server struct {
	t      testing.TB
	h      *Handler
	ts     *httptest.Server
	c      *http.Client // logged in, does not follow redirects
	anon   *http.Client // no cookie
	root   string       // the JSONL store's directory
	origin string       // http://127.0.0.1:PORT
}

// newServer starts a viewer of a fresh JSONL store (and any other
// stores given), logged in.
func newServer(t testing.TB, o Options) *server {
	t.Helper()
	root := t.TempDir()
	ts := httptest.NewUnstartedServer(nil)
	o.Addr = ts.Listener.Addr().String()
	if o.Stores == nil {
		o.Stores = []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: root}}
	} else if o.Stores[0].Root == "" {
		o.Stores[0].Root = root
	}
	if o.IndexDir == "" {
		o.IndexDir = filepath.Join(t.TempDir(), "index")
	}
	if o.CacheDir == "" {
		o.CacheDir = filepath.Join(t.TempDir(), "cache")
	}
	o.Logf = func(format string, a ...any) { t.Logf(format, a...) }
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() {
		_ = h.Close()
		ts.Close()
	})
	jar, _ := cookiejar.New(nil)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s := &server{t: t, h: h, ts: ts, root: o.Stores[0].Root, origin: ts.URL,
		c:    &http.Client{Jar: jar, CheckRedirect: noRedirect, Timeout: 60 * time.Second},
		anon: &http.Client{CheckRedirect: noRedirect, Timeout: 60 * time.Second}}
	resp, err := s.c.Get(ts.URL + "/?token=" + h.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %s", resp.Status)
	}
	return s
}

// get fetches a path (below the handler) with the logged-in client and
// returns the status and body.
func (s *server) get(path string) (int, string) {
	s.t.Helper()
	resp, err := s.c.Get(s.origin + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mustGet fetches a path and fails unless it is 200.
func (s *server) mustGet(path string) string {
	s.t.Helper()
	code, body := s.get(path)
	if code != http.StatusOK {
		s.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

// post posts a form as the page does (with the CSRF token unless the form
// sets csrf itself).
func (s *server) post(path string, form url.Values) *http.Response {
	s.t.Helper()
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", s.h.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, s.origin+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.origin)
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// page returns the path of the session file's page.
func (s *server) page(file string) string {
	s.t.Helper()
	u := s.h.sessionURL(file, layout.FormatJSONL)
	if u == "" {
		s.t.Fatalf("%s is in no store", file)
	}
	return u
}

// fixture is a session written through the engine: a model change, a
// question, an answer with thinking and a tool call, its result, a
// label, an abandoned branch with a summary, a compaction, and texts
// holding markup and a secret.
type fixture struct {
	base                               time.Time // the time of its first entry
	file                               string
	id                                 string
	question, answer, result, abandon  string
	summary, second, compact, markupID string
}

const (
	markup = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`
	secret = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefXYZ"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// fixtures counts the fixtures written: each starts a minute after the
// one before, so that the newest is the last written.
var fixtures atomic.Int64

// writeFixture writes the fixture session into dir for cwd.
func writeFixture(t testing.TB, dir, cwd string) *fixture {
	t.Helper()
	ctx := context.Background()
	base := t0.Add(time.Duration(fixtures.Add(1)) * time.Minute)
	now := base
	// Entries are dated as their messages are (the store's clock).
	at := func(d time.Duration) time.Time { now = base.Add(d); return now }
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, CacheDir: t.TempDir(),
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(ctx, cwd, engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := &fixture{base: base, file: s.SessionFile(), id: s.SessionID()}
	must := func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Input: 0.003, Output: 0.003, Total: 0.006})
	must(s.AppendModelChange("anthropic", "claude-sonnet-4-5"))
	f.question = must(s.AppendMessage(message.NewUser("Why does the build fail?", at(0))))
	f.answer = must(s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{
		message.NewThinking("Check the CI log first."),
		message.NewText("Let me look at the log."),
		message.NewToolCall("call_1", "bash", map[string]string{"command": "make test"}),
	}, usage, message.StopToolUse, at(time.Second))))
	f.result = must(s.AppendMessage(message.NewToolResult("call_1", "bash",
		[]message.Block{message.NewText("codec.go:12: undefined: utf16\nFAIL")}, true, at(2*time.Second))))
	f.abandon = must(s.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText("The abandoned answer about the vendor directory.")}, usage, message.StopStop, at(3*time.Second))))
	must(s.AppendLabelChange(f.result, "the failure"))
	f.summary = must(s.BranchWithSummary(engine.BranchSummary{FromID: f.result, Summary: "Tried the vendor directory; it did not help."}))
	f.markupID = must(s.AppendMessage(message.NewUser("Show me "+markup+" and my key "+secret, at(4*time.Second))))
	f.second = must(s.AppendMessage(message.NewAssistant("anthropic-messages", "openai", "gpt-5", []message.Block{
		message.NewText("The fix: import unicode/utf16 in codec.go."),
	}, message.NewUsage(500, 100, 0, 0, message.Cost{Input: 0.001, Output: 0.002, Total: 0.003}), message.StopStop, at(24*time.Hour))))
	f.compact = must(s.AppendCompaction(engine.Compaction{Summary: "The build failed on a missing import; fixed.", FirstKeptEntryID: f.second, TokensBefore: 1800}))
	must(s.AppendSessionInfo("fix the " + markup + " build"))
	return f
}

// write opens the session file for writing, through the engine.
func openWriter(t testing.TB, file string) *engine.Session {
	t.Helper()
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: filepath.Dir(file), Sync: engine.SyncNone, CacheDir: t.TempDir(), Command: "test-writer"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Open(context.Background(), file, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fileBytes returns a file's bytes.
func fileBytes(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
