package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	generate "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
)

// makeStore writes n small generated sessions with old mtimes.
func makeStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := generate.Dir(dir, n, 6000, 11); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// indexPath is where listing dir keeps its index: under the user cache
// directory, which TestMain points at a temporary directory.
func indexPath(t *testing.T, dir string) string {
	t.Helper()
	cache, err := layout.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return engine.ListIndexPath(cache, dir)
}

func listJSON(t *testing.T, dir string, noIndex bool) any {
	t.Helper()
	infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", engine.ListOptions{NoIndex: noIndex, EveryCwd: true})
	if err != nil {
		t.Fatal(err)
	}
	return infosJSON(t, infos, dir)
}

func TestListIndexGivesTheScanResults(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 20)
	scan := listJSON(t, dir, true)
	if _, err := os.Stat(indexPath(t, dir)); err == nil {
		t.Fatal("NoIndex wrote an index")
	}
	first := listJSON(t, dir, false) // builds the index
	st, err := os.Stat(indexPath(t, dir))
	if err != nil {
		t.Fatalf("listing did not write an index: %v", err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("index mode %v, want 0600", st.Mode().Perm())
	}
	warm := listJSON(t, dir, false) // served from it
	if diff := cmp.Diff(scan, first); diff != "" {
		t.Errorf("first indexed list differs from a scan:\n%s", diff)
	}
	if diff := cmp.Diff(scan, warm); diff != "" {
		t.Errorf("warm indexed list differs from a scan:\n%s", diff)
	}
}

func TestListIndexNoticesChanges(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 5)
	listJSON(t, dir, false)
	ents, _ := os.ReadDir(dir)
	var victim string
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".jsonl" {
			victim = filepath.Join(dir, e.Name())
			break
		}
	}
	// Append a user message by hand (as pi would) and backdate the file:
	// the size changed, so the cached entry must not be used.
	f, err := os.OpenFile(victim, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"feedbeef","parentId":null,"timestamp":"2026-05-01T00:00:00.000Z","message":{"role":"user","content":"a brand new question","timestamp":1777593600000}}` + "\n")
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(victim, old, old)
	if diff := cmp.Diff(listJSON(t, dir, true), listJSON(t, dir, false)); diff != "" {
		t.Errorf("index served a stale entry after a change:\n%s", diff)
	}
	// A new file and a removed file are noticed too.
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(listJSON(t, dir, true), listJSON(t, dir, false)); diff != "" {
		t.Errorf("index kept a removed file:\n%s", diff)
	}
}

func TestListIndexDamagedOrRacy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		index string
	}{
		{"garbage", "not an index\n{{{"},
		{"empty", ""},
		{"foreign version", `{"sessctlListIndex":99}` + "\n"},
		{"old version", `{"sessctlListIndex":2}` + "\n"},
		{"another directory's", `{"sessctlListIndex":3,"dir":"/elsewhere"}` + "\n" + `{"name":"x.jsonl","size":1,"mtimeNs":"1"}` + "\n"},
		{"damaged line", `{"sessctlListIndex":1}` + "\n" + `{"name":"x.jsonl","size":1,` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := makeStore(t, 4)
			if err := os.MkdirAll(filepath.Dir(indexPath(t, dir)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(indexPath(t, dir), []byte(c.index), 0o600); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(listJSON(t, dir, true), listJSON(t, dir, false)); diff != "" {
				t.Errorf("a damaged index changed the listing:\n%s", diff)
			}
		})
	}
	t.Run("recently modified files are not cached", func(t *testing.T) {
		t.Parallel()
		dir := makeStore(t, 3)
		// Modified "just now" as far as the listing can tell, however long
		// it takes to get there on a loaded machine: a time ahead of the
		// clock stays within the racy window.
		now := time.Now().Add(time.Hour)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			os.Chtimes(filepath.Join(dir, e.Name()), now, now)
		}
		listJSON(t, dir, false)
		data, _ := os.ReadFile(indexPath(t, dir))
		if strings.Count(string(data), "\n") > 1 {
			t.Errorf("files modified just now were cached:\n%s", data)
		}
	})
}

// A session writer refreshes its entry in an existing index on Close, so
// the next listing serves it from the index (and gets it right).
func TestListIndexUpdatedByWrites(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 3)
	listJSON(t, dir, false)
	s, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(context.Background(), "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{
		`{"role":"user","content":"written through the engine","timestamp":1777593600000}`,
		`{"role":"assistant","content":[{"type":"text","text":"and indexed on close"}],"provider":"p","model":"m","timestamp":1777593601000}`,
	} {
		if _, err := s.AppendMessage(raw(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(indexPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), filepath.Base(s.SessionFile())) || !strings.Contains(string(data), "written through the engine") {
		t.Fatalf("closing the writer did not add its entry to the index:\n%s", data)
	}
	// The texts are kept apart, beside the index.
	texts, err := os.ReadFile(indexPath(t, dir) + ".text")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(texts), filepath.Base(s.SessionFile())) || !strings.Contains(string(texts), "and indexed on close") {
		t.Fatalf("closing the writer did not add its texts to the text index:\n%s", texts)
	}
	if diff := cmp.Diff(listJSON(t, dir, true), listJSON(t, dir, false)); diff != "" {
		t.Errorf("indexed listing after a write differs from a scan:\n%s", diff)
	}
}

// An info served from the index is written from the cached bytes, unless
// the caller changed a field of its copy.
func TestWriteInfoNoticesChangedFields(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 2)
	listJSON(t, dir, false) // builds the index
	infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", engine.ListOptions{EveryCwd: true})
	if err != nil {
		t.Fatal(err)
	}
	in := infos[0]
	in.Name, in.HasName = "renamed by the caller", true
	in.MessageCount = 12345
	var buf strings.Builder
	render.Info(&buf, &in)
	if !strings.Contains(buf.String(), `"name":"renamed by the caller"`) || !strings.Contains(buf.String(), `"messageCount":12345`) {
		t.Fatalf("WriteInfo used stale cached bytes:\n%s", buf.String())
	}
	var got struct{ AllMessagesText string }
	if err := json.Unmarshal([]byte(buf.String()), &got); err != nil || got.AllMessagesText == "" || got.AllMessagesText != in.AllMessagesText() {
		t.Fatalf("allMessagesText lost (%v):\n%s", err, buf.String())
	}
}

// TestListWritesNothingIntoTheStore checks that listing (and closing a
// writer, which refreshes the index) leaves pi's session directory as it
// was: the index lives under the user cache directory, keyed by the
// listed directory, and is never required.
func TestListWritesNothingIntoTheStore(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 4)
	before := dirNames(t, dir)
	listJSON(t, dir, false)
	if diff := cmp.Diff(before, dirNames(t, dir)); diff != "" {
		t.Errorf("listing wrote into the session directory (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(indexPath(t, dir)); err != nil {
		t.Errorf("no index under the cache directory: %v", err)
	}
	other := makeStore(t, 2)
	if indexPath(t, other) == indexPath(t, dir) {
		t.Error("two directories share an index file")
	}

	// A cache directory that cannot be made: the listing is the same.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := openStore(t, engine.StoreOptions{Dir: dir, CacheDir: filepath.Join(blocked, "cache")}).List(t.Context(), "/", engine.ListOptions{EveryCwd: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(listJSON(t, dir, true), infosJSON(t, infos, dir)); diff != "" {
		t.Errorf("listing without a usable cache differs:\n%s", diff)
	}
}
