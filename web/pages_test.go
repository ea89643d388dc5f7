package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// entryIDs returns the ids of the transcript entries of a page, in order.
func entryIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<li class="entry [^"]*" id="e-([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// treeIDs returns the ids the tree of a page links to.
func treeIDs(body string) []string {
	_, tree, _ := strings.Cut(body, `class="treelines"`)
	var ids []string
	for _, m := range regexp.MustCompile(`data-id="([^"]+)"`).FindAllStringSubmatch(tree, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestSessionPageShowsTheActiveBranchBesideTheTree(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	s.h.list.invalidate()
	body := s.mustGet(s.page(f.file))
	ids := entryIDs(body)
	// The active branch: up to the result, the summary, then the rest;
	// not the abandoned answer.
	st, _ := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: s.root, CacheDir: t.TempDir()})
	es, err := st.Open(context.Background(), f.file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	var want []string
	for _, e := range es.BranchPath("") {
		want = append(want, e.ID)
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("transcript %v, want the active branch %v", ids, want)
	}
	if strings.Contains(body, `id="e-`+f.abandon+`"`) {
		t.Error("the abandoned answer is in the transcript")
	}
	// The tree has every entry, the abandoned one too, with the label.
	tree := treeIDs(body)
	if len(tree) != len(es.Entries()) {
		t.Errorf("tree has %d entries, the session %d", len(tree), len(es.Entries()))
	}
	for _, want := range []string{f.abandon, f.summary, f.compact} {
		if !strings.Contains(strings.Join(tree, " "), want) {
			t.Errorf("tree lacks %s", want)
		}
	}
	for _, want := range []string{"the failure", "branch summary", "Tried the vendor directory", "compaction", "The build failed on a missing import",
		"thinking: Check the CI log first.", "→ bash", "result: codec.go:12: undefined: utf16", "anthropic/claude-sonnet-4-5", "openai/gpt-5",
		human.Cost(0.015)} {
		if !strings.Contains(body, strings.ReplaceAll(want, `"`, "&#34;")) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Thinking and results fold; a bash call shows its command.
	for _, kind := range []string{"thinking", "result"} {
		if !strings.Contains(body, `<details class="fold `+kind) {
			t.Errorf("no folded %s block", kind)
		}
	}
	if !strings.Contains(body, `<pre class="cmd"><code>make test</code></pre>`) {
		t.Error("the bash call does not show its command")
	}
	// An entry's link in the tree shows the branch ending there.
	at := s.mustGet(s.page(f.file) + "?at=" + f.abandon)
	ids = entryIDs(at)
	if len(ids) == 0 || ids[len(ids)-1] != f.abandon || !strings.Contains(at, `id="pinned"`) {
		t.Errorf("?at=%s shows %v", f.abandon, ids)
	}
	if !strings.Contains(at, `href="`+s.page(f.file)+`?at=`+f.abandon+`#e-`+f.abandon+`"`) {
		t.Error("the tree does not link to the branch ending at the abandoned answer")
	}
	if code, _ := s.get(s.page(f.file) + "?at=nosuchentry"); code != http.StatusNotFound {
		t.Errorf("an unknown entry: %d", code)
	}
}

func TestListShowsNewestFirstWithForksUnderTheirParent(t *testing.T) {
	s := newServer(t, Options{})
	a := writeFixture(t, s.root, "/w/app")
	b := writeFixture(t, s.root, "/w/lib")
	// b is newer; a fork of a goes under a.
	resp := s.post(actURL(s.page(a.file), "fork"), url.Values{"entry": {a.result}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("fork: %s", resp.Status)
	}
	forkPage := resp.Header.Get("Location")
	if !strings.HasSuffix(forkPage, "?done=fork") {
		t.Fatalf("fork redirects to %q", forkPage)
	}
	body := s.mustGet(forkPage)
	// The branch up to the result, and the result's label re-created.
	if ids := entryIDs(body); len(ids) != 5 || ids[3] != a.result || !strings.Contains(body, "the failure") {
		t.Errorf("the fork holds %v, want the branch up to %s and its label", ids, a.result)
	}
	if !strings.Contains(body, "Forked") || !strings.Contains(body, `href="`+s.page(a.file)+`"`) {
		t.Error("the fork's page names neither the act nor its parent")
	}
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)
	list := s.mustGet("/")
	rows := regexp.MustCompile(`<tr class="(d\d[^"]*)">\s*<td class="when"[^>]*>[^<]*</td>\s*<td class="title">(?:<span class="fork"[^>]*>↳</span> )?<a href="([^"]+)"`).FindAllStringSubmatch(list, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2])
	}
	fork := strings.TrimSuffix(forkPage, "?done=fork")
	want := []string{"d0 " + s.page(b.file), "d0 " + s.page(a.file), "d1 child " + fork}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("list rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The parent's page lists its fork.
	if body := s.mustGet(s.page(a.file)); !strings.Contains(body, `<li><a href="`+fork+`">`) {
		t.Error("the parent's page does not list its fork")
	}
	// Filters: cwd, dates, text.
	// (The fork's last message is a's tool result, of a's first day.)
	for q, n := range map[string]int{"cwd=/w/lib": 1, "cwd=/w": 3, "cwd=/w/app": 2, "cwd=/elsewhere": 0,
		"from=2026-03-02": 2, "to=2026-03-01": 1, "from=2026-03-01&to=2026-03-01": 1, "q=" + url.QueryEscape(b.id): 1,
		"q=fail": 3, "from=garbage": 3} {
		body := s.mustGet("/?" + q)
		if got := strings.Count(body, `<td class="when"`); got != n {
			t.Errorf("?%s: %d rows, want %d", q, got, n)
		}
	}
	if body := s.mustGet("/?from=garbage"); !strings.Contains(body, `class="error"`) {
		t.Error("a bad date is not reported")
	}
	// The cost column: filled in by the script from /api/usage.
	key := "s/pi/" + escapeRel(filepath.Base(a.file))
	var costs map[string]string
	if err := json.Unmarshal([]byte(s.mustGet("/api/usage?k="+url.QueryEscape(key)+"&k=s/pi/nosuch.jsonl&k=s/d9/x.jsonl")), &costs); err != nil {
		t.Fatal(err)
	}
	if costs[key] != human.Cost(0.015) || len(costs) != 1 {
		t.Errorf("costs %v, want %s for %s only", costs, human.Cost(0.015), key)
	}
	if list := s.mustGet("/"); !strings.Contains(list, ">"+human.Cost(0.015)+"<") {
		t.Error("a counted cost is not in the list")
	}
}

func TestTranscriptIsPagedAndReadByPage(t *testing.T) {
	for _, lean := range []bool{false, true} {
		t.Run(fmt.Sprintf("lean=%v", lean), func(t *testing.T) {
			o := Options{}
			if lean {
				o.leanMin = 1
			}
			s := newServer(t, o)
			ctx := context.Background()
			st, _ := engine.OpenStore(ctx, engine.StoreOptions{Dir: s.root, Sync: engine.SyncNone, CacheDir: t.TempDir()})
			w, err := st.Create(ctx, "/w/big", engine.CreateOptions{WriteAtOnce: true})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i := range 250 {
				id, err := w.AppendMessage(message.NewUser(fmt.Sprintf("prompt number %d", i), t0.Add(time.Duration(i)*time.Second)))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			file := w.SessionFile()
			w.Close()
			page := s.page(file)
			body := s.mustGet(page)
			if got := entryIDs(body); strings.Join(got, " ") != strings.Join(ids[150:], " ") {
				t.Fatalf("first page: %d entries from %v, want the last 100", len(got), got[:1])
			}
			if !strings.Contains(body, "prompt number 249") || !strings.Contains(body, "entries 151–250 of 250") {
				t.Error("the last page lacks its texts or its place")
			}
			v, _ := s.h.views.get(ctx, file, s.h.o.leanMin)
			v.mu.RLock()
			detached := 0
			for _, c := range v.st.chunks {
				for i := range c {
					if c[i].Detached() {
						detached++
					}
				}
			}
			v.mu.RUnlock()
			if lean != (detached == 250) {
				t.Errorf("lean %v: %d entries detached", lean, detached)
			}
			first := s.mustGet(page + "?start=0")
			if got := entryIDs(first); strings.Join(got, " ") != strings.Join(ids[:100], " ") || !strings.Contains(first, "prompt number 0<") {
				t.Errorf("?start=0: %d entries", len(got))
			}
			// Appends are read on from where the reading ended.
			w, err = st.Open(ctx, file, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			more, _ := w.AppendMessage(message.NewUser("one more prompt", t0))
			w.Close()
			body = s.mustGet(page)
			if got := entryIDs(body); got[len(got)-1] != more || !strings.Contains(body, "one more prompt") {
				t.Error("the appended entry is not shown")
			}
			v.mu.RLock()
			chunks := len(v.st.chunks)
			v.mu.RUnlock()
			// Where a stat has no file id (Windows), a grown file cannot
			// be proved the same file, and is read again whole.
			want := 2
			if fi, err := os.Stat(file); err == nil && keyOf(fi).ino == 0 {
				want = 1
			}
			if chunks != want {
				t.Errorf("the file was read in %d pieces after an append, want %d (read on from where it ended where the file has an id)", chunks, want)
			}
			// A file rewritten in its middle is read again, never shown
			// from stale offsets.
			data := fileBytes(t, file)
			data = strings.Replace(data, "prompt number 120", "prompt NUMBER 120", 1)
			if err := os.WriteFile(file+".tmp", []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(file+".tmp", file); err != nil {
				t.Fatal(err)
			}
			if body := s.mustGet(page + "?start=100"); !strings.Contains(body, "prompt NUMBER 120") {
				t.Error("a replaced file is shown as it was")
			}
		})
	}
}

func TestActsWriteThroughTheEngine(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	page := s.page(f.file)
	ok := func(act string, form url.Values) string {
		t.Helper()
		resp := s.post(actURL(page, act), form)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %s", act, resp.Status)
		}
		return resp.Header.Get("Location")
	}
	ok("label", url.Values{"entry": {f.question}, "text": {"  the question  "}})
	ok("rename", url.Values{"text": {"a better name"}})
	ok("branch", url.Values{"entry": {f.result}, "text": {"Gave up on the compaction path."}})
	es, err := engine.OpenFile(context.Background(), f.file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := es.Label(f.question); l != "the question" {
		t.Errorf("label %q", l)
	}
	if n, _ := es.Name(); n != "a better name" {
		t.Errorf("name %q", n)
	}
	leaf, _ := es.Entry(func() string { id, _ := es.LeafID(); return id }())
	if leaf.Type != jsonl.TypeBranchSummary || leaf.ParentID != f.result {
		t.Errorf("leaf %s %s under %s, want a branch summary under %s", leaf.ID, leaf.Type, leaf.ParentID, f.result)
	}
	es.Close()
	body := s.mustGet(page)
	if !strings.Contains(body, "Gave up on the compaction path.") || !strings.Contains(body, "a better name") {
		t.Error("the page does not show the acts")
	}
	// Refused: a branch without a summary, an unknown entry, NUL bytes.
	before := fileBytes(t, f.file)
	for _, c := range []struct {
		act  string
		form url.Values
		code int
	}{
		{"branch", url.Values{"entry": {f.result}, "text": {"  "}}, http.StatusBadRequest},
		{"label", url.Values{"entry": {"nosuchentry"}, "text": {"x"}}, http.StatusNotFound},
		{"branch", url.Values{"entry": {"nosuchentry"}, "text": {"x"}}, http.StatusNotFound},
		{"rename", url.Values{"text": {"a\x00b"}}, http.StatusBadRequest},
		{"rename", url.Values{"text": {"a\xffb"}}, http.StatusBadRequest},
		{"delete", url.Values{}, http.StatusNotFound},
	} {
		resp := s.post(actURL(page, c.act), c.form)
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %v: %s, want %d", c.act, c.form, resp.Status, c.code)
		}
	}
	if fileBytes(t, f.file) != before {
		t.Error("a refused act wrote to the session")
	}
}

func TestActsAreRefusedWhileAnotherWriterHoldsTheSession(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	page := s.page(f.file)
	w := openWriter(t, f.file)
	defer w.Close()
	// The owner record appears when the holder first writes it (Open
	// takes the lock and records itself).
	body := s.mustGet(page)
	host, _ := os.Hostname()
	wantHolder := fmt.Sprintf("written by pid %d (test-writer) on %s since ", os.Getpid(), host)
	if !strings.Contains(body, wantHolder) {
		t.Errorf("the page does not name the holder %q:\n%s", wantHolder, regexp.MustCompile(`(?s)<p class="holder"[^>]*>.*?</p>`).FindString(body))
	}
	before := fileBytes(t, f.file)
	for _, c := range []struct {
		act  string
		form url.Values
	}{
		{"label", url.Values{"entry": {f.question}, "text": {"x"}}},
		{"rename", url.Values{"text": {"x"}}},
		{"branch", url.Values{"entry": {f.question}, "text": {"x"}}},
	} {
		resp := s.post(actURL(page, c.act), c.form)
		b := new(strings.Builder)
		_, _ = bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(b.String(), "refused: the session is being written by pid "+fmt.Sprint(os.Getpid())+" (test-writer) on "+host) {
			t.Errorf("%s while held: %s\n%s", c.act, resp.Status, regexp.MustCompile(`<p id="message">[^<]*`).FindString(b.String()))
		}
	}
	if fileBytes(t, f.file) != before {
		t.Error("an act wrote to a session another writer holds")
	}
	// A fork only reads its source: it is not refused.
	resp := s.post(actURL(page, "fork"), url.Values{"entry": {f.result}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("fork of a held session: %s", resp.Status)
	}
	w.Close()
	resp = s.post(actURL(page, "label"), url.Values{"entry": {f.question}, "text": {"x"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("label once released: %s", resp.Status)
	}
}

func TestExportsAreMaskedUnlessAskedOtherwise(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	exp := strings.Replace(s.page(f.file), "/s/", "/export/s/", 1)
	for _, format := range []string{"md", "html", "json"} {
		resp, err := s.c.Get(s.origin + exp + "?format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		_, _ = bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
			t.Fatalf("%s: %s, %q", format, resp.Status, resp.Header.Get("Content-Disposition"))
		}
		if strings.Contains(b.String(), secret) || !strings.Contains(b.String(), "[REDACTED]") || !strings.Contains(b.String(), "import unicode/utf16") {
			t.Errorf("%s export: secret masked %v, text there %v", format, !strings.Contains(b.String(), secret), strings.Contains(b.String(), "import unicode/utf16"))
		}
		resp, err = s.c.Get(s.origin + exp + "?redact=0&format=" + format + "&at=" + f.abandon)
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		_, _ = bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		if !strings.Contains(b.String(), "The abandoned answer") || strings.Contains(b.String(), "import unicode/utf16") {
			t.Errorf("%s export at %s is not that branch", format, f.abandon)
		}
	}
	if code, _ := s.get(exp + "?format=pdf"); code != http.StatusBadRequest {
		t.Errorf("an unknown format: %d", code)
	}
	// Redaction fails closed: the download is cut off, nothing unmasked
	// is sent.
	s.h.redactor = failingRedactor{}
	resp, err := s.c.Get(s.origin + exp + "?format=md")
	if err == nil {
		b := new(strings.Builder)
		_, rerr := bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		if rerr == nil || strings.Contains(b.String(), "Why does the build fail") {
			t.Errorf("a failed redaction ended as a whole download (%v):\n%s", rerr, b.String())
		}
	}
}

type failingRedactor struct{}

func (failingRedactor) Header(line []byte) ([]byte, error) { return line, nil }
func (failingRedactor) Entry([]byte) ([]byte, error)       { return nil, fmt.Errorf("cannot mask") }
func (failingRedactor) String(s string) string             { return s }

func TestSearchPage(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	writeFixture(t, s.root, "/w/lib")
	body := s.mustGet("/search?q=" + url.QueryEscape("utf16"))
	hits := strings.Count(body, `<li class="hit">`)
	if hits == 0 || !strings.Contains(body, "<mark>utf16</mark>") {
		t.Fatalf("%d hits:\n%s", hits, body)
	}
	link := s.page(f.file) + "?at=" + f.second + "#e-" + f.second
	if !strings.Contains(body, `href="`+link+`"`) {
		t.Errorf("no hit links to the entry %s", link)
	}
	// The CLI's filters.
	for q, want := range map[string]int{
		"q=utf16&role=user":                        0,
		"q=utf16&role=assistant":                   2,
		"q=utf16&role=tool&tool=bash":              2,
		"q=utf16&cwd=/w/lib":                       hits / 2,
		"q=utf16&limit=1":                          1,
		"q=utf16&since=2026-03-02":                 2,
		"q=utf16&until=2026-03-01&role=assistant":  0,
		"q=utf16&store=pi":                         hits,
		"q=" + url.QueryEscape(`"missing import"`): 2,
	} {
		body := s.mustGet("/search?" + q)
		if got := strings.Count(body, `<li class="hit">`); got != want {
			t.Errorf("?%s: %d hits, want %d", q, got, want)
		}
	}
	for q, msg := range map[string]string{"q=%22unbalanced": "bad search query", "q=x&role=boss": "Role must be", "q=x&since=never": "Since:"} {
		if body := s.mustGet("/search?" + q); !strings.Contains(body, msg) {
			t.Errorf("?%s does not say %q", q, msg)
		}
	}
	// The handler keeps its index open between searches, watching the
	// stores: a search right after an append finds it.
	for i := range 5 {
		word := fmt.Sprintf("pangolin%d", i)
		line := fmt.Sprintf(`{"type":"message","id":"pg%d","parentId":null,"timestamp":"2026-03-03T10:00:00.000Z","message":{"role":"user","content":%q,"timestamp":1}}`, i, word)
		appendRaw(t, f.file, line)
		if body := s.mustGet("/search?q=" + word); strings.Count(body, `<li class="hit">`) != 1 {
			t.Errorf("a search right after appending %q does not find it", word)
		}
	}
}

// appendRaw appends a line to a file, as another writer would.
func appendRaw(t *testing.T, path, line string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestStatsPageCountsPerModelAndDay(t *testing.T) {
	s := newServer(t, Options{})
	writeFixture(t, s.root, "/w/app")
	writeFixture(t, s.root, "/w/lib")
	var body string
	for range 100 {
		body = s.mustGet("/stats")
		if !strings.Contains(body, "Reading the sessions") && strings.Contains(body, "2 of 2 session files counted") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	row := func(table, key string) string {
		_, tb, _ := strings.Cut(body, `id="`+table+`"`)
		tb, _, _ = strings.Cut(tb, "</table>")
		return regexp.MustCompile(`<tr[^>]*><td>` + regexp.QuoteMeta(key) + `</td>.*?</tr>`).FindString(tb)
	}
	// Per fixture: two claude answers (1,200 tokens, $0.006 each), one
	// gpt-5 answer (600 tokens, $0.003) a day later.
	for _, c := range []struct{ table, key, want string }{
		{"permodel", "anthropic/claude-sonnet-4-5", `<td class="num">4</td><td class="num">4,000</td><td class="num">800</td><td class="num">0 / 0</td><td class="num">4,800</td><td class="num">` + human.Cost(0.024) + `</td>`},
		{"permodel", "openai/gpt-5", `<td class="num">2</td><td class="num">1,000</td><td class="num">200</td><td class="num">0 / 0</td><td class="num">1,200</td><td class="num">` + human.Cost(0.006) + `</td>`},
		{"perday", t0.Local().Format("2006-01-02"), `<td class="num">4</td><td class="num">4,800</td><td class="num">` + human.Cost(0.024) + `</td>`},
		{"perday", t0.Add(24 * time.Hour).Local().Format("2006-01-02"), `<td class="num">2</td><td class="num">1,200</td><td class="num">` + human.Cost(0.006) + `</td>`},
	} {
		if r := row(c.table, c.key); !strings.Contains(r, c.want) {
			t.Errorf("%s %s: %q, want %q", c.table, c.key, r, c.want)
		}
	}
	day := t0.Add(24 * time.Hour).Local().Format("2006-01-02")
	body = s.mustGet("/stats?from=" + day + "&cwd=/w/lib")
	if r := row("permodel", "all models"); !strings.Contains(r, `<td class="num">1</td>`) {
		t.Errorf("filtered total: %q", r)
	}
}

func TestAgentUseSessions(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	aus, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(root, "proj", "session"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := aus.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "reviewer", Name: "reviewer"}, Model: "anthropic:claude-sonnet-4-5",
		Project: agentuse.Project{Root: "/w/au", Cwd: "/w/au"}})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := sess.AddMessage(agentuse.MessageSpec{Task: "Review the change " + markup, ModelID: "anthropic:claude-sonnet-4-5"})
	if _, err := sess.AddPart(msg, agentuse.TextPart("Looks good to me.", time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.AddPart(msg, agentuse.ToolPart("call_1", "bash", map[string]string{"command": "go vet"}, time.Now())); err != nil {
		t.Fatal(err)
	}
	dir := sess.Dir()
	s := newServer(t, Options{Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL}, {Name: "agentuse", Format: layout.FormatAgentUse, Root: root}}})
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)
	list := s.mustGet("/")
	page := s.h.sessionURL(dir, layout.FormatAgentUse)
	if page == "" || !strings.Contains(list, `href="`+page+`"`) || !strings.Contains(list, "agentuse") || !strings.Contains(list, "/w/au") {
		t.Fatalf("the list does not show the AgentUse session %s", page)
	}
	body := s.mustGet(page)
	for _, want := range []string{"Looks good to me.", "→ bash", "Review the change &lt;script&gt;", "written by pid " + fmt.Sprint(os.Getpid())} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	sess.Close()
	if body := s.mustGet(page); !strings.Contains(body, "no writer holds the lock") {
		t.Error("the page names a holder after Close")
	}
	exp := strings.Replace(page, "/a/", "/export/a/", 1)
	if b := s.mustGet(exp + "?format=json"); !strings.Contains(b, `"format": "agentuse"`) || !strings.Contains(b, "Looks good") {
		t.Errorf("json export:\n%.400s", b)
	}
	if b := s.mustGet(exp + "?format=txt"); !strings.Contains(b, "Looks good") {
		t.Errorf("text export:\n%.400s", b)
	}
	// Search finds it, and links to it.
	if b := s.mustGet("/search?q=looks"); !strings.Contains(b, `href="`+page) {
		t.Error("search does not link to the AgentUse session")
	}
}

// events reads a live page's event stream in the background and keeps
// every event.
type events struct {
	mu   sync.Mutex
	got  []event
	more chan struct{} // signalled at each event
	err  error
}

type event struct{ name, data string }

func (s *server) events(page string) *events {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.origin+strings.Replace(page, "/s/", "/events/s/", 1), nil)
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		s.t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s.t.Cleanup(func() { resp.Body.Close() })
	e := &events{more: make(chan struct{}, 1)}
	go func() {
		r := bufio.NewReader(resp.Body)
		var name, data string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				e.mu.Lock()
				e.err = err
				e.mu.Unlock()
				e.signal()
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			case line == "" && name != "":
				e.mu.Lock()
				e.got = append(e.got, event{name, data})
				e.mu.Unlock()
				e.signal()
				name, data = "", ""
			}
		}
	}()
	return e
}

func (e *events) signal() {
	select {
	case e.more <- struct{}{}:
	default:
	}
}

// mark returns the number of events so far.
func (e *events) mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.got)
}

// waitFor waits for an event named name, from the from'th on, whose data
// satisfies ok, and returns its data.
func (e *events) waitFor(t testing.TB, from int, name string, ok func(data string) bool) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		e.mu.Lock()
		for _, ev := range e.got[min(from, len(e.got)):] {
			if ev.name == name && ok(ev.data) {
				e.mu.Unlock()
				return ev.data
			}
		}
		err := e.err
		got := fmt.Sprint(e.got)
		e.mu.Unlock()
		if err != nil {
			t.Fatalf("waiting for %s: %v; events: %s", name, err, got)
		}
		select {
		case <-e.more:
		case <-deadline:
			t.Fatalf("no such %s event; events: %s", name, got)
		}
	}
}

func TestLivePageGetsAppendsAndTheHolder(t *testing.T) {
	s := newServer(t, Options{FollowInterval: 50 * time.Millisecond})
	f := writeFixture(t, s.root, "/w/app")
	ev := s.events(s.page(f.file))
	ev.waitFor(t, 0, "holder", func(d string) bool { return strings.Contains(d, "no writer holds the lock") })
	w := openWriter(t, f.file)
	id, err := w.AppendMessage(message.NewUser("a live prompt "+markup, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	d := ev.waitFor(t, 0, "entries", func(d string) bool { return strings.Contains(d, id) })
	var got []liveEntry
	if err := json.Unmarshal([]byte(d), &got); err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	if last.ID != id || !last.Leaf || !strings.Contains(last.HTML, `id="e-`+id+`"`) || !strings.Contains(last.HTML, "a live prompt &lt;script&gt;") {
		t.Errorf("live entry %+v", last)
	}
	ev.waitFor(t, 0, "holder", func(d string) bool {
		return strings.Contains(d, fmt.Sprintf("written by pid %d (test-writer)", os.Getpid()))
	})
	lid, _ := w.AppendLabelChange(id, "live label")
	d = ev.waitFor(t, 0, "entries", func(d string) bool { return strings.Contains(d, lid) })
	if !strings.Contains(d, `"target":"`+id+`","label":"live label"`) {
		t.Errorf("label event: %s", d)
	}
	m := ev.mark()
	w.Close()
	ev.waitFor(t, m, "holder", func(d string) bool { return strings.Contains(d, "no writer holds the lock") })
}

func TestDamagedAndOldSessions(t *testing.T) {
	s := newServer(t, Options{DamagedHint: "Run the doctor on it."})
	bad := filepath.Join(s.root, "2026-03-01T09-00-00-000Z_bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"type":"message","id":"a1","parentId":null}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := s.get(s.page(bad))
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "_bad.jsonl:1: no session header") || !strings.Contains(body, "Run the doctor on it.") {
		t.Errorf("a file without a header: %d\n%s", code, regexp.MustCompile(`(?s)<section.*</section>`).FindString(body))
	}
	if fileBytes(t, bad) != `{"type":"message","id":"a1","parentId":null}`+"\n" {
		t.Error("the damaged file was changed")
	}
	// A version 1 file (no ids) is shown migrated, in memory only.
	old := filepath.Join(s.root, "2026-03-01T09-00-00-000Z_old.jsonl")
	v1 := `{"type":"session","id":"old-1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w/old"}` + "\n" +
		`{"type":"message","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"an old prompt","timestamp":1}}` + "\n"
	if err := os.WriteFile(old, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	body = s.mustGet(s.page(old))
	if len(entryIDs(body)) != 1 || !strings.Contains(body, "an old prompt") {
		t.Errorf("a version 1 file:\n%s", body)
	}
	if fileBytes(t, old) != v1 {
		t.Error("showing a version 1 file migrated it on disk")
	}
}

func TestListWaitsForItsFirstReadingAndFiltersAllCwds(t *testing.T) {
	s := newServer(t, Options{})
	writeFixture(t, s.root, "/w/app")
	// Before the first listing is read, the page says so and reloads.
	s.h.list.mu.Lock()
	s.h.list.cur = nil
	s.h.list.running = make(chan struct{}) // a reading that never ends
	s.h.list.mu.Unlock()
	body := s.mustGet("/")
	if !strings.Contains(body, `<meta http-equiv="refresh" content="2">`) || !strings.Contains(body, "Reading the stores") {
		t.Errorf("before the first listing:\n%s", body)
	}
	s.h.list.mu.Lock()
	s.h.list.running = nil
	s.h.list.mu.Unlock()
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)
	for _, cwd := range []string{"/", "/w/", "/w/app/"} {
		if body := s.mustGet("/?cwd=" + url.QueryEscape(cwd)); strings.Count(body, `<td class="when"`) != 1 {
			t.Errorf("cwd=%s shows no session", cwd)
		}
	}
}

func TestAgentUsePageIsToldOfChanges(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	aus, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := aus.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "a", Name: "a"}, Model: "m:m"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s := newServer(t, Options{FollowInterval: 100 * time.Millisecond,
		Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL}, {Name: "agentuse", Format: layout.FormatAgentUse, Root: root}}})
	page := s.h.sessionURL(sess.Dir(), layout.FormatAgentUse)
	req, _ := http.NewRequest(http.MethodGet, s.origin+strings.Replace(page, "/a/", "/events/a/", 1), nil)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	got := make(chan string, 16)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(got)
				return
			}
			got <- line
		}
	}()
	wait := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-got:
				if !ok {
					t.Fatalf("the stream ended before %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q", want)
			}
		}
	}
	wait("written by pid " + fmt.Sprint(os.Getpid()))
	if _, err := sess.AddMessage(agentuse.MessageSpec{Task: "t", ModelID: "m:m"}); err != nil {
		t.Fatal(err)
	}
	wait("event: changed")
}

func TestListShowsSessionsThatNameEachOtherAsParents(t *testing.T) {
	s := newServer(t, Options{})
	a := filepath.Join(s.root, "a.jsonl")
	b := filepath.Join(s.root, "b.jsonl")
	head := func(id, parent string) string {
		p, _ := json.Marshal(parent) // a Windows path has backslashes
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w","parentSession":` + string(p) + `}` + "\n"
	}
	os.WriteFile(a, []byte(head("aaaa", b)), 0o600)
	os.WriteFile(b, []byte(head("bbbb", a)), 0o600)
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)
	body := s.mustGet("/")
	for _, p := range []string{a, b} {
		if strings.Count(body, `href="`+s.page(p)+`"`) != 1 {
			t.Errorf("%s is not listed once", p)
		}
	}
}

func TestImportedSessionsNameTheirAgent(t *testing.T) {
	s := newServer(t, Options{Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL}, {Name: "indusagi", Format: layout.FormatJSONL, Root: t.TempDir()}}})
	dir := filepath.Join(s.root, "--w-imp--")
	os.MkdirAll(dir, 0o700)
	file := filepath.Join(dir, "2026-03-01T09-00-00-000Z_imp.jsonl")
	data := `{"type":"session","version":3,"id":"imp-1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w/imp"}` + "\n" +
		`{"type":"custom","customType":"sessctl-import","data":{"source":"claude","sourcePath":"/x.jsonl","sourceId":"x","digest":"d"},"id":"a0000001","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}` + "\n" +
		`{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"imported prompt","timestamp":1772355601000}}` + "\n"
	os.WriteFile(file, []byte(data), 0o600)
	ind := writeFixture(t, s.h.stores[1].root, "/w/ind")
	s.h.list.invalidate()
	s.h.list.wait(5 * time.Second)
	body := s.mustGet("/")
	if !strings.Contains(body, `<td class="agent">imported: claude</td>`) || !strings.Contains(body, `<td class="agent">indusagi</td>`) {
		t.Errorf("the agents are not named:\n%s", body)
	}
	if b := s.mustGet(s.h.sessionURL(ind.file, layout.FormatJSONL)); !strings.Contains(b, "Why does the build fail?") {
		t.Error("the indusagi session's page")
	}
}

// treeClass returns the class of the tree line linking to id.
func treeClass(t *testing.T, body, id string) string {
	t.Helper()
	_, tree, _ := strings.Cut(body, `class="treelines"`)
	m := regexp.MustCompile(`<li class="([^"]*)">(?:<span class="label">[^<]*</span> )?<a href="[^"]*" data-id="` + regexp.QuoteMeta(id) + `"`).FindStringSubmatch(tree)
	if m == nil {
		t.Fatalf("the tree has no line for %s", id)
	}
	return " " + m[1] + " "
}

// openReader opens the session file read-only through the engine.
func openReader(t *testing.T, file string) (*engine.Session, error) {
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: filepath.Dir(file), CacheDir: t.TempDir()})
	if err != nil {
		return nil, err
	}
	return st.Open(context.Background(), file, engine.OpenOptions{ReadOnly: true})
}

func TestTreeMarksTheBranchShownAndFollowsAppends(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	s.h.list.invalidate()
	es, err := openReader(t, f.file)
	if err != nil {
		t.Fatal(err)
	}
	branch := es.BranchPath("")
	leaf := branch[len(branch)-1].ID
	es.Close()
	// Pages asked for at once, each building the tree (the race detector
	// watches the shared tree).
	var wg sync.WaitGroup
	bodies := make([]string, 6)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := ""
			if i%2 == 1 {
				q = "?at=" + f.abandon
			}
			resp, err := s.c.Get(s.origin + s.page(f.file) + q)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, body := range bodies {
		leafAt := strings.Contains(treeClass(t, body, leaf), " at ")
		abandonAt := strings.Contains(treeClass(t, body, f.abandon), " at ")
		if i%2 == 0 && (!leafAt || abandonAt) || i%2 == 1 && (leafAt || !abandonAt) {
			t.Errorf("page %d: the tree marks the leaf %v, the abandoned answer %v", i, leafAt, abandonAt)
		}
		onBranch := strings.Contains(treeClass(t, body, f.second), " on ")
		if onBranch != (i%2 == 0) {
			t.Errorf("page %d: the second answer on the branch shown: %v", i, onBranch)
		}
	}
	// An append changes the tree the page and its live fragment show.
	w := openWriter(t, f.file)
	id, err := w.AppendMessage(message.NewUser("one more question", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		body := s.mustGet(s.page(f.file))
		if slices.Contains(treeIDs(body), id) {
			if c := treeClass(t, body, id); !strings.Contains(c, " at ") || !strings.Contains(c, " leaf ") {
				t.Errorf("the appended entry's tree line: %q", c)
			}
			if strings.Contains(treeClass(t, body, leaf), " at ") {
				t.Error("the old leaf is still marked")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the appended entry never reached the tree")
		}
		time.Sleep(50 * time.Millisecond)
	}
	frag := s.mustGet(strings.Replace(s.page(f.file), "/s/", "/tree/", 1))
	if !strings.Contains(frag, `data-id="`+id+`"`) {
		t.Error("the live tree fragment lacks the appended entry")
	}
}

// A number in a query that is not one, is negative or overflows is a bad
// request (400) on every page that takes one, never a panic nor a
// silently different page; a large one that is a number is a page past
// the end.
func TestBadNumbersInTheQueryAre400(t *testing.T) {
	s := newServer(t, Options{})
	f := writeFixture(t, s.root, "/w/app")
	page := s.page(f.file)
	for _, bad := range []string{"99999999999999999999", "-1", "x", "1e3", " 2", "0x10", "+1"} {
		for _, p := range []string{"/?page=", page + "?start=", "/search?q=utf16&limit="} {
			code, body := s.get(p + url.QueryEscape(bad))
			if code != http.StatusBadRequest {
				t.Errorf("GET %s%s: %d, want 400\n%.300s", p, bad, code, body)
			}
		}
	}
	for _, p := range []string{"/?page=9223372036854775807", "/?page=4611686018427387904", "/?page=1", page + "?start=9223372036854775807",
		"/search?q=utf16&limit=9223372036854775807"} {
		if code, body := s.get(p); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200\n%.300s", p, code, body)
		}
	}
}

// Who writes a session is looked up (lock.Inspect, lock.FileWriters,
// which scans /proc) once per change of the session for all its live
// streams, and never while it is idle: N open, idle streams cost no
// lookup, and an append by a writer without a lock, a writer taking the
// lock and its release cost one each, whatever N.
func TestLiveStreamsShareTheHolderLookups(t *testing.T) {
	for _, n := range []int{1, 12} {
		t.Run(fmt.Sprint(n, " streams"), func(t *testing.T) {
			s := newServer(t, Options{FollowInterval: 20 * time.Millisecond, holderEvery: 20 * time.Millisecond, holderRecheck: time.Hour})
			f := writeFixture(t, s.root, "/w/app")
			var evs []*events
			for range n {
				ev := s.events(s.page(f.file))
				ev.waitFor(t, 0, "holder", func(d string) bool { return strings.Contains(d, "no writer holds the lock") })
				evs = append(evs, ev)
			}
			// idle waits for the session to be looked at k more times and
			// returns the lookups made meanwhile.
			idle := func(k int64) int64 {
				t.Helper()
				l0, c0 := s.h.lookups.Load(), s.h.holderChecks.Load()
				deadline := time.Now().Add(30 * time.Second)
				for s.h.holderChecks.Load() < c0+k {
					if time.Now().After(deadline) {
						t.Fatalf("the session was not looked at %d times", k)
					}
					time.Sleep(5 * time.Millisecond)
				}
				return s.h.lookups.Load() - l0
			}
			// waitLookups waits for the lookups to reach want, then for the
			// session to be looked at again while idle, and says how many
			// there are.
			waitLookups := func(what string, want int64) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for s.h.lookups.Load() < want && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				idle(5)
				if got := s.h.lookups.Load(); got != want {
					t.Errorf("%s: %d lookups in all, want %d", what, got, want)
				}
			}
			if got := s.h.lookups.Load(); got != 1 {
				t.Errorf("%d streams opened: %d lookups, want 1", n, got)
			}
			if got := idle(10); got != 0 {
				t.Errorf("%d idle streams: %d lookups while idle, want 0", n, got)
			}
			// A writer without a lock (pi) appends: one lookup.
			m := make([]int, n)
			for i, ev := range evs {
				m[i] = ev.mark()
			}
			appendRaw(t, f.file, `{"type":"message","id":"pi1","parentId":"`+f.markupID+`","timestamp":"2026-03-03T10:00:00.000Z","message":{"role":"user","content":"from pi","timestamp":1}}`)
			for i, ev := range evs {
				ev.waitFor(t, m[i], "entries", func(d string) bool { return strings.Contains(d, "pi1") })
			}
			waitLookups("an append without a lock", 2)
			// A writer takes the lock: one lookup, and every stream is told.
			for i, ev := range evs {
				m[i] = ev.mark()
			}
			w := openWriter(t, f.file)
			for i, ev := range evs {
				ev.waitFor(t, m[i], "holder", func(d string) bool { return strings.Contains(d, "(test-writer)") })
			}
			waitLookups("a writer taking the lock", 3)
			// It appends while holding it: the lock is known, no lookup.
			if _, err := w.AppendMessage(message.NewUser("under the lock", time.Now())); err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				ev.waitFor(t, 0, "entries", func(d string) bool { return strings.Contains(d, "under the lock") })
			}
			waitLookups("an append under the lock", 3)
			for i, ev := range evs {
				m[i] = ev.mark()
			}
			w.Close()
			for i, ev := range evs {
				ev.waitFor(t, m[i], "holder", func(d string) bool { return !strings.Contains(d, "(test-writer)") })
			}
			if got := idle(10); got != 0 {
				t.Errorf("after the writer left: %d lookups while idle, want 0", got)
			}
		})
	}
}
