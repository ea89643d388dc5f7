package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestShortIDsDistinct: the list page, the forks and children of a
// session page and the search page show sessions created within one
// second (their UUIDv7s share the first eight hex digits) by distinct
// prefixes of their ids, each of no other session.
func TestShortIDsDistinct(t *testing.T) {
	s := newServer(t, Options{})
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: s.root})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{
		"019c8d2a-1b3c-7a00-8000-000000000001", // the parent
		"019c8d2a-1b3c-7b00-8000-000000000002", // its fork
		"019c8d2a-1b9e-7c00-8000-000000000003", // its child, in another cwd
		"019c8d2a-1ba0-7d00-8000-000000000004",
	}
	var parent string
	for i, id := range ids {
		o := engine.CreateOptions{ID: id}
		if i == 1 || i == 2 {
			o.ParentSession = parent
		}
		cwd := "/home/dev/a"
		if i >= 2 {
			cwd = "/home/dev/b"
		}
		sess, err := st.Create(t.Context(), cwd, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{
			`{"role":"user","content":"the zanzibar question","timestamp":1772355600000}`,
			`{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1772355601000}`,
		} {
			msg, err := message.Decode([]byte(m))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.AppendMessage(msg); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			parent = sess.SessionFile()
		}
		sess.Close()
	}
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)

	distinct := func(what string, shorts []string, want int) {
		t.Helper()
		if len(shorts) != want {
			t.Fatalf("%s: %d ids %v, want %d", what, len(shorts), shorts, want)
		}
		seen := map[string]bool{}
		for _, sh := range shorts {
			if seen[sh] {
				t.Errorf("%s: %s shown twice in %v", what, sh, shorts)
			}
			seen[sh] = true
			n := 0
			for _, id := range ids {
				if strings.HasPrefix(id, sh) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: %s is a prefix of %d sessions' ids, want 1", what, sh, n)
			}
		}
	}
	groups := func(re, body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	distinct("list page", groups(`<code class="id">([^<]*)</code>`, s.mustGet("/")), len(ids))
	page := s.mustGet(s.page(parent))
	_, kids, _ := strings.Cut(page, "forks and children")
	distinct("forks and children", groups(`<li><a href="[^"]*">the zanzibar question \(([^)]*)\)</a></li>`, kids), 2)
	distinct("search page", groups(`<code>([^<]*)</code></a> <span class="kind">`, s.mustGet("/search?q=zanzibar")), len(ids))
}
