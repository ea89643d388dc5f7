package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
)

// writeSession writes a JSONL session of one exchange in the store at
// dir, dated mtime, and returns its id.
func writeSession(t *testing.T, dir, text string, mtime time.Time) string {
	t.Helper()
	s, err := testStore(t, dir).Create(t.Context(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`{"role":"user","content":"` + text + `","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","timestamp":2}`} {
		if _, err := s.AppendMessage(raw(m)); err != nil {
			t.Fatal(err)
		}
	}
	id, file := s.Header().ID, s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestListPlaces lists a directory holding JSONL sessions and an
// AgentUse session, as both of its places: the JSONL sessions newest
// first, the AgentUse one after them, in the table and with their texts.
func TestListPlaces(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old := writeSession(t, filepath.Join(root, "a"), "older one", time.Now().Add(-time.Hour))
	recent := writeSession(t, filepath.Join(root, "b"), "newer one", time.Now())
	au, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: filepath.Join(root, "au"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	w, err := au.Create(t.Context(), agentuse.SessionSpec{Agent: agentuse.Agent{ID: "agents/x", Name: "x"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	places, err := layout.ResolvePlacesFrom(root, func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var warned []error
	o := engine.ListOptions{NoIndex: true, NoText: true, Warn: func(err error) { warned = append(warned, err) }}
	l, err := ListPlaces(t.Context(), places, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.JSONL) != 2 || l.JSONL[0].ID != recent || l.JSONL[1].ID != old || len(l.AgentUse) != 1 || l.Empty() || len(warned) != 0 {
		t.Fatalf("ListPlaces: %d JSONL (want %s then %s), %d AgentUse, warned %v", len(l.JSONL), recent, old, len(l.AgentUse), warned)
	}
	var b strings.Builder
	if err := l.WriteText(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i, j, k := strings.Index(out, "newer one"), strings.Index(out, "older one"), strings.Index(out, "\n\nCREATED")
	if i < 0 || j < i || k < j || !strings.Contains(out[k:], ShortID(l.AgentUse[0].ID)) {
		t.Errorf("table:\n%s", out)
	}
	texts := map[string]bool{}
	for in, err := range l.Texts(t.Context(), o) {
		if err != nil {
			t.Fatal(err)
		}
		texts[in.FirstMessage] = true
	}
	if !texts["newer one"] || !texts["older one"] || len(texts) != 2 {
		t.Errorf("Texts: %v", texts)
	}
	// No place holds a session: an empty listing writes nothing.
	empty, err := layout.ResolvePlacesFrom(t.TempDir(), func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if l, err = ListPlaces(t.Context(), empty, o); err != nil || !l.Empty() {
		t.Fatalf("empty: %v, %v", l, err)
	}
	b.Reset()
	if err := l.WriteText(t.Context(), &b); err != nil || b.Len() != 0 {
		t.Errorf("empty WriteText: %q, %v", b.String(), err)
	}
}

// TestListStore lists one cwd of a store, with its short ids made long
// enough that no session of another cwd shares them, and every cwd
// grouped by cwd.
func TestListStore(t *testing.T) {
	t.Parallel()
	ids := []string{"01a23400-0000-7000-8000-00000000000a", "01a23400-0000-7000-8000-00000000000b"}
	n := 0
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone,
		NewSessionID: func() string { n++; return ids[n-1] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"/p", "/q"} {
		s, err := st.Create(t.Context(), cwd, engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{`{"role":"user","content":"in ` + cwd + `","timestamp":1}`,
			`{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","timestamp":2}`} {
			if _, err := s.AppendMessage(raw(m)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	o := engine.ListOptions{NoIndex: true, NoText: true}
	l, err := ListStore(t.Context(), st, "/p", o, false)
	if err != nil || len(l.JSONL) != 1 || l.JSONL[0].ID != ids[0] {
		t.Fatalf("ListStore(/p): %+v, %v", l, err)
	}
	var b strings.Builder
	if err := l.WriteText(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, " "+ids[0]+" ") || strings.Contains(out, "in /q") {
		t.Errorf("the /p table does not shorten its id among the store's (%s):\n%s", ids[1], out)
	}
	if l, err = ListStore(t.Context(), st, "", o, true); err != nil || len(l.JSONL) != 2 {
		t.Fatalf("ListStore(every cwd): %+v, %v", l, err)
	}
	b.Reset()
	if err := l.WriteText(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "cwd: /p") || !strings.Contains(out, "cwd: /q") {
		t.Errorf("every cwd, not grouped by cwd:\n%s", out)
	}
	n = 0
	for in, err := range l.Texts(t.Context(), o) {
		if err != nil || !strings.HasPrefix(in.FirstMessage, "in /") {
			t.Errorf("Texts: %+v, %v", in, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("Texts yielded %d sessions, want 2", n)
	}
}

// TestPlaceListingWriteJSON writes a directory's listing of both formats
// as one JSON array; a file gone since the listing goes to Warn and is
// left out; a write error, or the context ending, stops it with that
// error.
func TestPlaceListingWriteJSON(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSession(t, filepath.Join(root, "a"), "first", time.Now())
	writeSession(t, filepath.Join(root, "b"), "second", time.Now().Add(-time.Minute))
	au, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: filepath.Join(root, "au"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	w, err := au.Create(t.Context(), agentuse.SessionSpec{Agent: agentuse.Agent{ID: "agents/x", Name: "x"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	places, err := layout.ResolvePlacesFrom(root, func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var warned []error
	o := engine.ListOptions{NoIndex: true, NoText: true, Warn: func(err error) { warned = append(warned, err) }}
	l, err := ListPlaces(t.Context(), places, o)
	if err != nil {
		t.Fatal(err)
	}
	elements := func(ctx context.Context) (int, error) {
		var b bytes.Buffer
		err := l.WriteJSON(ctx, o, func(parts [][]byte) error {
			for _, p := range parts {
				b.Write(p)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		var arr []map[string]any
		if err := json.Unmarshal(b.Bytes(), &arr); err != nil {
			t.Fatalf("%v in %s", err, b.String())
		}
		return len(arr), nil
	}
	if n, err := elements(t.Context()); n != 3 || err != nil || len(warned) != 0 {
		t.Errorf("WriteJSON: %d elements, %v, warned %v; want 3", n, err, warned)
	}
	if err := os.Remove(l.JSONL[1].Path); err != nil {
		t.Fatal(err)
	}
	if n, err := elements(t.Context()); n != 2 || err != nil || len(warned) != 1 {
		t.Errorf("a file gone: %d elements, %v, warned %v; want 2 and one warning", n, err, warned)
	}
	boom := errors.New("boom")
	if err := l.WriteJSON(t.Context(), o, func([][]byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a write error: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := elements(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled context: %v", err)
	}
}

// TestRows writes rows read elsewhere (a remote's) as List and ListJSON
// write them: the same table and the same bytes of JSON.
func TestRows(t *testing.T) {
	t.Parallel()
	infos := []engine.Info{
		{Path: "--p--/b.jsonl", ID: "01a23400-0000-7000-8000-00000000000b", FirstMessage: "newer", MessageCount: 2},
		{Path: "--p--/a.jsonl", ID: "01a23400-0000-7000-8000-00000000000a", FirstMessage: "older", MessageCount: 4},
	}
	l := Rows(infos)
	var got, want strings.Builder
	if err := l.WriteText(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if err := List(&want, infos); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || !strings.Contains(got.String(), "newer") {
		t.Errorf("table:\n%s\nwant\n%s", got.String(), want.String())
	}
	var b bytes.Buffer
	if err := l.WriteJSON(t.Context(), engine.ListOptions{}, func(parts [][]byte) error {
		for _, p := range parts {
			b.Write(p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if w := bytes.Join(ListJSON(infos), nil); !bytes.Equal(b.Bytes(), w) {
		t.Errorf("JSON:\n%s\nwant\n%s", b.Bytes(), w)
	}
	if Rows(nil).Empty() != true || l.Empty() {
		t.Error("Empty is wrong")
	}
}
