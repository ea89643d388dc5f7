package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
)

// Every route, for the rules that hold on all of them.
func routes(s *server, f *fixture) []string {
	page := s.page(f.file)
	return []string{"/", page, page + "?at=" + f.question, strings.Replace(page, "/s/", "/tree/", 1),
		strings.Replace(page, "/s/", "/entry/", 1) + "?id=" + f.question, strings.Replace(page, "/s/", "/events/s/", 1),
		strings.Replace(page, "/s/", "/export/s/", 1) + "?format=md", "/search?q=build", "/stats", "/api/usage?k=x",
		"/static/style.css", "/static/app.js", "/nosuchpage"}
}

func TestEveryRequestNeedsTheToken(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	for _, p := range routes(s, f) {
		for _, c := range []struct {
			name  string
			setup func(*http.Request)
		}{
			{"no token", func(*http.Request) {}},
			{"wrong cookie", func(r *http.Request) {
				r.AddCookie(&http.Cookie{Name: s.h.cookie, Value: strings.Repeat("0", len(s.h.secret))})
			}},
			{"the token in the cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: s.h.cookie, Value: s.h.token}) }},
			{"token of another name", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "token", Value: s.h.token}) }},
			{"token in a header", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s.h.token) }},
		} {
			req, _ := http.NewRequest(http.MethodGet, s.origin+p, nil)
			c.setup(req)
			resp, err := s.anon.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s (%s): %s, want 401", p, c.name, resp.Status)
			}
			if strings.Contains(string(body), "build") || strings.Contains(string(body), "sessctl-") && strings.Contains(string(body), "<") {
				t.Errorf("GET %s (%s): the refusal shows content:\n%s", p, c.name, body)
			}
		}
		// A wrong token in the URL is refused too, and sets nothing.
		resp, err := s.anon.Get(s.origin + p + sep(p) + "token=" + strings.Repeat("a", 48))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("GET %s with a wrong token: %s, cookies %v", p, resp.Status, resp.Cookies())
		}
	}
	// A POST without the cookie, CSRF token or not, writes nothing.
	before := fileBytes(t, f.file)
	form := url.Values{"csrf": {s.h.csrf}, "entry": {f.question}, "text": {"x"}}
	resp, err := s.anon.PostForm(s.origin+actURL(s.page(f.file), "label"), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || fileBytes(t, f.file) != before {
		t.Errorf("POST without the cookie: %s; file changed: %v", resp.Status, fileBytes(t, f.file) != before)
	}
}

func sep(p string) string {
	if strings.Contains(p, "?") {
		return "&"
	}
	return "?"
}

func TestTokenInTheURLSetsACookieAndIsDropped(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	page := s.page(f.file)
	resp, err := s.anon.Get(s.origin + page + "?at=" + f.question + "&token=" + s.h.token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %s, want 303", resp.Status)
	}
	loc := resp.Header.Get("Location")
	if strings.Contains(loc, "token") || loc != page+"?at="+f.question {
		t.Errorf("redirect to %q, want the page without the token", loc)
	}
	var c *http.Cookie
	for _, x := range resp.Cookies() {
		if x.Name == s.h.cookie {
			c = x
		}
	}
	if c == nil || c.Value != s.h.secret || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie %+v, want the handler's secret, HttpOnly, SameSite=Strict, Path=/", c)
	}
	// The cookie alone opens the page.
	req, _ := http.NewRequest(http.MethodGet, s.origin+loc, nil)
	req.AddCookie(c)
	resp, err = s.anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %s", resp.Status)
	}
	// The redirect never leaves the server, whatever the path.
	for _, p := range []string{"//evil.example/x", "/\\evil.example/x"} {
		req, _ := http.NewRequest(http.MethodGet, s.origin+"/", nil)
		req.URL.Path = p
		req.URL.RawQuery = "token=" + s.h.token
		resp, err := s.anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		u, err := url.Parse(loc)
		if resp.StatusCode != http.StatusSeeOther || err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(loc, "/") ||
			strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			t.Errorf("path %q: %s, redirect to %q", p, resp.Status, loc)
		}
	}
}

func TestHostMustBeTheBoundAddress(t *testing.T) {
	s := newServer(t, Options{})
	_, port, _ := strings.Cut(strings.TrimPrefix(s.origin, "http://"), ":")
	for _, c := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},     // DNS rebinding: a name of the attacker's
		{"127.0.0.1.nip.io:" + port, http.StatusMisdirectedRequest}, // a name that resolves to loopback
		{"127.0.0.1:1", http.StatusMisdirectedRequest},
		{"127.0.0.2:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1", http.StatusMisdirectedRequest},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.origin+"/static/style.css", nil)
		req.Host = c.host
		req.AddCookie(&http.Cookie{Name: s.h.cookie, Value: s.h.secret})
		resp, err := s.anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %q: %s, want %d", c.host, resp.Status, c.want)
		}
		if resp.Header.Get("Content-Security-Policy") != contentSecurityPolicy {
			t.Errorf("Host %q: no CSP on the response", c.host)
		}
	}
	// A request without a Host header (HTTP/1.0) names no address.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.origin, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /static/style.css HTTP/1.0\r\nCookie: %s=%s\r\n\r\n", s.h.cookie, s.h.secret)
	status, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.Contains(status, " 421 ") {
		t.Errorf("no Host header: %q, want 421", status)
	}
	// Even the token is refused on a wrong Host.
	req, _ := http.NewRequest(http.MethodGet, s.origin+"/?token="+s.h.token, nil)
	req.Host = "evil.example:" + port
	resp, err := s.anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || len(resp.Cookies()) != 0 {
		t.Errorf("token on a wrong Host: %s, cookies %v", resp.Status, resp.Cookies())
	}
}

func TestHostRule(t *testing.T) {
	for _, c := range []struct {
		addr, host string
		ok         bool
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "[::1]:8080", false},
		{"[::1]:8080", "[::1]:8080", true},
		{"[::1]:8080", "localhost:8080", true},
		{"0.0.0.0:8080", "192.168.1.5:8080", true}, // an address of this machine: no DNS involved
		{"0.0.0.0:8080", "devbox:8080", false},     // a name: could be anyone's
		{"0.0.0.0:8080", "localhost:8080", true},
		{"192.168.1.5:8080", "192.168.1.5:8080", true},
		{"192.168.1.5:8080", "localhost:8080", false},
		{"192.168.1.5:8080", "192.168.1.5:9090", false},
	} {
		r, err := parseHostRule(c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.allows(c.host); got != c.ok {
			t.Errorf("bound to %s, Host %s: allowed %v, want %v", c.addr, c.host, got, c.ok)
		}
	}
	if _, err := New(Options{Addr: "127.0.0.1:0"}); err == nil {
		t.Error("New accepted port 0, which no Host header names")
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New accepted no address")
	}
}

func TestWritesArePOSTWithCSRF(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	act := actURL(s.page(f.file), "label")
	before := fileBytes(t, f.file)
	unchanged := func(what string) {
		t.Helper()
		if fileBytes(t, f.file) != before {
			t.Fatalf("%s wrote to the session", what)
		}
	}
	// GET (and other methods) on an act is not a write.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, _ := http.NewRequest(m, s.origin+act+"?entry="+f.question+"&text=x&csrf="+s.h.csrf, nil)
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %s, want 405", m, act, resp.Status)
		}
		unchanged(m)
	}
	for _, c := range []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no CSRF token", url.Values{"csrf": nil}, nil},
		{"a wrong CSRF token", url.Values{"csrf": {"0123456789abcdef0123456789abcdef"}}, nil},
		{"the access token as CSRF token", url.Values{"csrf": {s.h.token}}, nil},
		{"another origin", url.Values{}, map[string]string{"Origin": "http://evil.example"}},
		{"another port", url.Values{}, map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"a null origin", url.Values{}, map[string]string{"Origin": "null"}},
		{"a cross-site fetch", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"a same-site fetch", url.Values{}, map[string]string{"Sec-Fetch-Site": "same-site"}},
	} {
		form := url.Values{"entry": {f.question}, "text": {"written"}}
		for k, v := range c.form {
			form[k] = v
		}
		if c.form.Has("csrf") && c.form["csrf"] == nil {
			form.Del("csrf")
			form["csrf"] = []string{""}
		}
		req, _ := http.NewRequest(http.MethodPost, s.origin+act, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.origin)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s, want 403", c.name, resp.Status)
		}
		unchanged(c.name)
	}
	// With everything right, it writes.
	resp := s.post(act, url.Values{"entry": {f.question}, "text": {"written"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the page's own POST: %s", resp.Status)
	}
	if !strings.Contains(fileBytes(t, f.file), `"label":"written"`) {
		t.Error("the label was not written")
	}
}

func TestOnlySessionsInTheStoresAreServed(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	outside := writeFixture(t, t.TempDir(), "/w/other")
	dir := filepath.Dir(f.file)
	secretFile := filepath.Join(t.TempDir(), "secret.jsonl")
	if err := os.WriteFile(secretFile, []byte(`{"type":"session","version":3,"id":"secret","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"to-outside.jsonl": outside.file,
		"to-private.jsonl": secretFile,
		"to-passwd.jsonl":  "/etc/passwd",
		"dangling.jsonl":   filepath.Join(t.TempDir(), "gone.jsonl"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Dir(outside.file), filepath.Join(s.root, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a session"), 0o600); err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(s.root, ".trash", "t1")
	if err := os.MkdirAll(trash, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trash, "x.jsonl"), []byte(fileBytes(t, f.file)), 0o600); err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string { r, _ := filepath.Rel(s.root, p); return filepath.ToSlash(r) }
	d := func(name string) string { return path.Join(rel(dir), name) }
	bad := []string{
		"/s/pi/" + d("to-outside.jsonl"),
		"/s/pi/" + d("to-private.jsonl"),
		"/s/pi/" + d("to-passwd.jsonl"),
		"/s/pi/" + d("dangling.jsonl"),
		"/s/pi/linked-dir/" + filepath.Base(outside.file),
		"/s/pi/" + d("notes.txt"),
		"/s/pi/.trash/t1/x.jsonl",
		"/s/pi/" + d("%2e%2e/%2e%2e/") + filepath.Base(outside.file),
		"/s/pi/..%2f..%2fetc/passwd",
		"/s/pi/%2fetc%2fpasswd",
		"/s/pi/" + url.PathEscape(outside.file),
		"/s/nosuchstore/" + rel(f.file),
		"/a/pi/" + rel(dir),
		"/static/..%2fweb.go",
		"/static/%2e%2e%2fweb.go",
		"/static/templates",
		"/static/.hidden",
	}
	for _, route := range []string{"/s/", "/entry/", "/tree/", "/export/s/", "/events/s/"} {
		for _, p := range bad {
			if !strings.HasPrefix(p, "/s/") {
				continue
			}
			p = route + strings.TrimPrefix(p, "/s/")
			if route == "/export/s/" {
				p += "?format=json&redact=0"
			}
			code, body := s.get(p)
			if code == http.StatusOK || strings.Contains(body, "secret") || strings.Contains(body, "root:") || strings.Contains(body, "/w/other") {
				t.Errorf("GET %s: %d, body:\n%.300s", p, code, body)
			}
		}
	}
	for _, p := range bad {
		if strings.HasPrefix(p, "/s/") {
			continue
		}
		code, body := s.get(p)
		if code == http.StatusOK || strings.Contains(body, "package web") {
			t.Errorf("GET %s: %d, body:\n%.300s", p, code, body)
		}
	}
	// Acts on such a path write nothing anywhere.
	before := fileBytes(t, outside.file)
	resp := s.post("/act/label/pi/"+d("to-outside.jsonl"), url.Values{"entry": {outside.question}, "text": {"x"}})
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther || fileBytes(t, outside.file) != before {
		t.Errorf("label through a link out of the store: %s", resp.Status)
	}
	// What is in the store is served.
	s.mustGet(s.page(f.file))
	if code, _ := s.get("/static/style.css"); code != http.StatusOK {
		t.Errorf("the stylesheet: %d", code)
	}
	// A symbolic link inside the store to a session inside it is not
	// the store's own either (TestSymlinkedSessionsAreNeitherServedNorListed):
	// a write through it writes nothing.
	in := filepath.Join(dir, "alias.jsonl")
	if err := os.Symlink(f.file, in); err != nil {
		t.Fatal(err)
	}
	before = fileBytes(t, f.file)
	resp = s.post(actURL("/s/pi/"+d("alias.jsonl"), "label"), url.Values{"entry": {f.question}, "text": {"x"}})
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther || fileBytes(t, f.file) != before {
		t.Errorf("label through a link: %s", resp.Status)
	}
}

func TestSessionTextIsEscaped(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/<b>app</b>")
	// A label and a tool result holding markup too.
	w := openWriter(t, f.file)
	if _, err := w.AppendLabelChange(f.second, markup); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pages := []string{"/", s.page(f.file), s.page(f.file) + "?at=" + f.markupID,
		strings.Replace(s.page(f.file), "/s/", "/entry/", 1) + "?id=" + f.markupID,
		strings.Replace(s.page(f.file), "/s/", "/tree/", 1), "/search?q=pwned"}
	for _, p := range pages {
		body := s.mustGet(p)
		for _, bad := range []string{"<script>alert", "<img src=x", "<b>app</b>"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: the page holds %q unescaped", p, bad)
			}
		}
	}
	body := s.mustGet(s.page(f.file) + "?at=" + f.markupID)
	if !strings.Contains(body, "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;") {
		t.Error("the transcript does not show the markup as text")
	}
	// The only scripts are the viewer's own file.
	for _, p := range pages {
		body := s.mustGet(p)
		if n := strings.Count(body, "<script"); n > 1 || (n == 1 && !strings.Contains(body, `<script src="/static/app.js" defer></script>`)) {
			t.Errorf("GET %s: %d script tags", p, n)
		}
	}
}

func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	if !strings.Contains(contentSecurityPolicy, "default-src 'none'") || strings.Contains(contentSecurityPolicy, "unsafe") ||
		!strings.Contains(contentSecurityPolicy, "script-src 'self'") || !strings.Contains(contentSecurityPolicy, "frame-ancestors 'none'") {
		t.Fatalf("the policy is not strict: %s", contentSecurityPolicy)
	}
	check := func(name string, resp *http.Response) {
		t.Helper()
		resp.Body.Close()
		hd := resp.Header
		if hd.Get("Content-Security-Policy") != contentSecurityPolicy || hd.Get("X-Content-Type-Options") != "nosniff" ||
			hd.Get("X-Frame-Options") != "DENY" || hd.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s (%s): headers %v", name, resp.Status, hd)
		}
	}
	for _, p := range routes(s, f) {
		if strings.Contains(p, "/events/") {
			continue
		}
		resp, err := s.c.Get(s.origin + p)
		if err != nil {
			t.Fatal(err)
		}
		check(p, resp)
		resp, err = s.anon.Get(s.origin + p)
		if err != nil {
			t.Fatal(err)
		}
		check(p+" without the token", resp)
	}
	resp := s.post(actURL(s.page(f.file), "label"), url.Values{"entry": {f.question}, "text": {"x"}})
	check("an act", resp)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.origin+strings.Replace(s.page(f.file), "/s/", "/events/s/", 1), nil)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	check("the event stream", resp)
	// The static files are the embedded ones, with their types.
	for name, ctype := range map[string]string{"style.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"} {
		resp, err := s.c.Get(s.origin + "/static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := assets.ReadFile("assets/static/" + name)
		if resp.Header.Get("Content-Type") != ctype || string(b) != string(want) {
			t.Errorf("/static/%s: %s, %d bytes", name, resp.Header.Get("Content-Type"), len(b))
		}
	}
}

func TestMountedUnderAPrefix(t *testing.T) {
	root := t.TempDir()
	f := writeFixture(t, root, "/w/app")
	ts := httptest.NewUnstartedServer(nil)
	h, err := New(Options{Addr: ts.Listener.Addr().String(), BasePath: "/sessions/", Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: root}},
		IndexDir: t.TempDir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/sessions/", http.StripPrefix("/sessions", h))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the agent's own page") })
	ts.Config.Handler = mux
	ts.Start()
	defer ts.Close()
	if !strings.HasSuffix(h.URL(), "/sessions/?token="+h.Token()) {
		t.Errorf("URL %s", h.URL())
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(strings.Replace(h.URL(), "http://"+ts.Listener.Addr().String(), ts.URL, 1))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/sessions/" {
		t.Fatalf("%s at %s", resp.Status, resp.Request.URL)
	}
	page := "/sessions" + h.sessionURL(f.file, layout.FormatJSONL)[len("/sessions"):]
	for _, want := range []string{`href="/sessions/static/style.css"`, `href="` + page + `"`, `action="/sessions/"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	for _, ck := range jar.Cookies(resp.Request.URL) {
		if ck.Name == h.cookie {
			goto found
		}
	}
	t.Error("no cookie for the prefix")
found:
	resp, err = c.Get(ts.URL + page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `action="`+strings.Replace(page, "/s/", "/act/label/", 1)+`"`) {
		t.Errorf("the session page under the prefix: %s", resp.Status)
	}
	// The cookie is the prefix's only.
	resp, _ = c.Get(ts.URL + "/")
	resp.Body.Close()
	if req := resp.Request; req.Header.Get("Cookie") != "" {
		t.Errorf("the viewer's cookie is sent to the agent's other pages: %s", req.Header.Get("Cookie"))
	}
}

// The cookie is not the token: a secret of the handler's own, drawn anew
// by every New (a server start), under a name holding the port (browsers
// send cookies for 127.0.0.1 to every port, so a name of one server's
// never stands for another's), HttpOnly and SameSite=Strict. A cookie
// holding the token, or a cookie of the server's previous start, opens
// nothing.
func TestCookieIsASessionSecretOfThePort(t *testing.T) {
	root := t.TempDir()
	writeFixture(t, root, "/w/app")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	var cur atomic.Pointer[Handler]
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().ServeHTTP(w, r) })}
	start := func() *Handler {
		h, err := New(Options{Addr: addr, Token: "a-token-given-by-the-embedder", Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL, Root: root}},
			IndexDir: t.TempDir(), CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		cur.Store(h)
		return h
	}
	h1 := start()
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &http.Client{CheckRedirect: noRedirect}
	login := func(h *Handler) *http.Cookie {
		t.Helper()
		resp, err := c.Get(h.URL())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cs := resp.Cookies()
		if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 {
			t.Fatalf("login: %s, cookies %v", resp.Status, cs)
		}
		ck := cs[0]
		if ck.Name != "sessctl-"+port || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" {
			t.Errorf("cookie %+v: want the name sessctl-%s, HttpOnly, SameSite=Strict, Path=/", ck, port)
		}
		if strings.Contains(ck.Value, h.Token()) || len(ck.Value) < 32 {
			t.Errorf("the cookie %q is (or holds) the token %q, or is short", ck.Value, h.Token())
		}
		return ck
	}
	status := func(ck *http.Cookie) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.AddCookie(ck)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ck1 := login(h1)
	if got := status(ck1); got != http.StatusOK {
		t.Fatalf("with the cookie: %d", got)
	}
	if got := status(&http.Cookie{Name: ck1.Name, Value: h1.Token()}); got != http.StatusUnauthorized {
		t.Errorf("a cookie holding the token: %d, want 401", got)
	}
	// The server starts again, with the same token: the old cookie is
	// refused, a new login gets a new one.
	h2 := start()
	if got := status(ck1); got != http.StatusUnauthorized {
		t.Errorf("the previous start's cookie: %d, want 401", got)
	}
	ck2 := login(h2)
	if ck2.Value == ck1.Value {
		t.Error("the cookie's secret is the same after a new start")
	}
	if got := status(ck2); got != http.StatusOK {
		t.Errorf("with the new cookie: %d", got)
	}
}

// The viewer serves and lists only what the store's walk yields as its
// own files (engine.Store.Files without Link; for AgentUse its walk,
// which follows no link): a symbolic link into .trash, to a session
// outside the store or to one inside it is neither served by any page
// nor listed, nor found by a search.
func TestSymlinkedSessionsAreNeitherServedNorListed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	dir := filepath.Dir(f.file)
	session := func(p, id, text string) {
		t.Helper()
		b := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w/` + id + `"}` + "\n" +
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}` + "\n"
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	trashed := filepath.Join(s.root, ".trash", "t1", "gone.jsonl")
	session(trashed, "trashed", "pangolintrash was deleted")
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	session(outside, "outsider", "pangolinout is not of this store")
	aliased := filepath.Join(dir, "real.jsonl")
	session(aliased, "aliased", "pangolinalias is here once")
	for name, target := range map[string]string{"to-trash.jsonl": trashed, "to-outside.jsonl": outside, "alias.jsonl": aliased} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(p string) string { r, _ := filepath.Rel(s.root, p); return filepath.ToSlash(r) }
	for _, name := range []string{"to-trash.jsonl", "to-outside.jsonl", "alias.jsonl"} {
		r := rel(filepath.Join(dir, name))
		for _, p := range []string{"/s/pi/" + r, "/s/pi/" + r + "?at=m1", "/entry/pi/" + r + "?id=m1", "/tree/pi/" + r,
			"/export/s/pi/" + r + "?format=json&redact=0", "/export/s/pi/" + r + "?format=md&redact=0", "/events/s/pi/" + r} {
			req, _ := http.NewRequest(http.MethodGet, s.origin+p, nil)
			ctx, cancel := context.WithCancel(context.Background())
			req = req.WithContext(ctx)
			resp, err := s.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := make([]byte, 64<<10)
			n, _ := io.ReadAtLeast(resp.Body, body, 1)
			cancel()
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || strings.Contains(string(body[:n]), "pangolin") {
				t.Errorf("GET %s: %s, body:\n%.300s", p, resp.Status, body[:n])
			}
		}
		if code, body := s.get("/api/usage?k=" + url.QueryEscape("s/pi/"+r)); code != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Errorf("usage of %s: %d %s", name, code, body)
		}
	}
	// The real file beside the alias is served and listed, once.
	s.mustGet("/s/pi/" + rel(aliased))
	s.h.list.invalidate()
	s.h.list.wait(time.Minute)
	list := s.mustGet("/")
	for _, w := range []string{"pangolintrash", "pangolinout", "to-trash", "to-outside", "alias.jsonl"} {
		if strings.Contains(list, w) {
			t.Errorf("the list shows %q", w)
		}
	}
	if strings.Count(list, "pangolinalias") != 1 {
		t.Errorf("the list shows the aliased session %d times, want once", strings.Count(list, "pangolinalias"))
	}
	for _, w := range []string{"pangolintrash", "pangolinout"} {
		if body := s.mustGet("/search?q=" + w); strings.Contains(body, `<li class="hit">`) {
			t.Errorf("a search for %s finds it:\n%s", w, body)
		}
	}
	if body := s.mustGet("/search?q=pangolinalias"); strings.Count(body, `<li class="hit">`) != 1 || strings.Contains(body, "alias.jsonl") {
		t.Errorf("a search for the aliased session: %d hits", strings.Count(body, `<li class="hit">`))
	}
}

// An AgentUse session directory reached through a symbolic link, to a
// session outside the store or inside it, is not served: the AgentUse
// walk follows no link.
func TestSymlinkedAgentUseSessionsAreNotServed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	ctx := context.Background()
	mk := func(dir, task string) string {
		t.Helper()
		aus, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: dir, Sync: agentuse.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := aus.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "reviewer", Name: "reviewer"}, Model: "m",
			Project: agentuse.Project{Root: "/w/au", Cwd: "/w/au"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.AddMessage(agentuse.MessageSpec{Task: task, ModelID: "m"}); err != nil {
			t.Fatal(err)
		}
		d := sess.Dir()
		_ = sess.Close()
		return d
	}
	root := t.TempDir()
	store := filepath.Join(root, "proj", "session")
	inside := mk(store, "pangolinin")
	outside := mk(filepath.Join(t.TempDir(), "session"), "pangolinout")
	s := newServer(t, Options{Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL}, {Name: "agentuse", Format: layout.FormatAgentUse, Root: root}}})
	s.mustGet(s.h.sessionURL(inside, layout.FormatAgentUse))
	for name, target := range map[string]string{"01JLINKOUT-reviewer": outside, "01JLINKIN-reviewer": inside, "linked-proj": filepath.Dir(filepath.Dir(outside))} {
		if err := os.Symlink(target, filepath.Join(filepath.Dir(inside), name)); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, filepath.Join(filepath.Dir(inside), name))
		if name == "linked-proj" {
			rel = filepath.Join(rel, "session", filepath.Base(outside))
		}
		for _, p := range []string{"/a/agentuse/" + filepath.ToSlash(rel), "/export/a/agentuse/" + filepath.ToSlash(rel) + "?format=json&redact=0"} {
			if code, body := s.get(p); code == http.StatusOK || strings.Contains(body, "pangolin") {
				t.Errorf("GET %s: %d\n%.300s", p, code, body)
			}
		}
	}
}
