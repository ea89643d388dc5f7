//go:build unix

package replica_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
	"github.com/sessctl/sessctl/search"
)

// walkSession is a small valid session whose one message holds text.
func walkSession(id, text string) []byte {
	return []byte(`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}` + "\n")
}

// TestStoreWalksAgree: every command that walks a store (migrate DIR,
// verify DIR and id lookup, stats --all, list --store DIR, search, sync)
// finds the same session files in a store that holds, besides them, a
// .trash directory, a backup, a quarantined tail, temporary, lock and
// owner files, a named pipe, a symbolic link to a session and one to a
// directory, and a directory that cannot be read; and each reports the
// named pipe and the unreadable directory, naming them. All of them walk
// with engine.Store.Files: migrate DIR and verify DIR take its files and
// what it left out as they come, id lookup is Store.Resolve, and the
// others are checked through their own packages.
func TestStoreWalksAgree(t *testing.T) {
	ctx := context.Background()
	agent := t.TempDir()
	sessions := filepath.Join(agent, "sessions")
	outside := t.TempDir()
	w := filepath.Join(sessions, "--w--")
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(w, "a.jsonl")
	c := filepath.Join(sessions, "--y--", "c.jsonl")
	write(a, walkSession("aaaa0001", "common alpha"))
	write(c, walkSession("cccc0001", "common gamma"))
	// sessctl's own files beside a session, each holding a session's bytes
	// so that a walk taking one would count it.
	for _, name := range []string{"a.jsonl.v1.bak", "a.jsonl.torn-1767225600000", "a.jsonl.tmp-0123456789abcdef",
		"a.jsonl.torn-1767225600000.tmp-0123456789abcdef", "a.jsonl.lock", "a.jsonl.owner"} {
		write(filepath.Join(w, name), walkSession("bbbb0001", "common sidecar"))
	}
	write(filepath.Join(sessions, ".trash", "2026-01-01T00-00-00-000Z", "--w--", "gone.jsonl"), walkSession("dddd0001", "common trashed"))
	pipe := filepath.Join(w, "pipe.jsonl")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	target := filepath.Join(outside, "real.jsonl")
	write(target, walkSession("eeee0001", "common linked"))
	link := filepath.Join(w, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(outside, "dir", "f.jsonl"), walkSession("ffff0001", "common linkeddir"))
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(sessions, "--linked--")); err != nil {
		t.Fatal(err)
	}
	// A directory no one can read by its path, root included, below a
	// session that can be read.
	deepTop := filepath.Join(sessions, "--x--")
	if err := os.MkdirAll(deepTop, 0o700); err != nil {
		t.Fatal(err)
	}
	unreadable := testenv.DeepChain(t, deepTop, func(int) string { return strings.Repeat("d", 200) }, func(r *os.Root, i int) {
		if i > 0 {
			return
		}
		if err := r.WriteFile("h.jsonl", walkSession("hhhh0001", "common hidden"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	deep := []string{filepath.Join(deepTop, strings.Repeat("d", 200), "h.jsonl")}

	files := append([]string{a, link, c}, deep...)
	slices.Sort(files)
	readable := slices.DeleteFunc(slices.Clone(files), func(p string) bool { return p == link })
	wantSkipped := []string{pipe, unreadable}
	slices.Sort(wantSkipped)

	paths := func(errs []error) []string {
		var out []string
		for _, err := range errs {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Errorf("skipped %v: no path", err)
				continue
			}
			if pe.Path == unreadable && !errors.Is(err, syscall.ENAMETOOLONG) || pe.Path == pipe && !errors.Is(err, vfs.ErrNotRegular) {
				t.Errorf("skipped %s: %v, not why", pe.Path, err)
			}
			out = append(out, pe.Path)
		}
		slices.Sort(out)
		return out
	}
	check := func(what string, gotFiles, wantFiles []string, gotSkipped []string) {
		t.Helper()
		slices.Sort(gotFiles)
		if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(wantSkipped, gotSkipped); diff != "" {
			t.Errorf("%s: skipped (-want +got):\n%s", what, diff)
		}
	}

	// The walk itself, as migrate DIR and verify DIR take it: the files
	// in path order, what was left out as an error with its path.
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: sessions})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var skipped []error
	for f, err := range st.Files(ctx) {
		switch {
		case err != nil && f.Path == "":
			t.Fatal(err)
		case err != nil:
			skipped = append(skipped, err)
			continue
		}
		got = append(got, f.Path)
		if f.Link != (f.Path == link) {
			t.Errorf("%s: Link %v", f.Path, f.Link)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("Files are not in path order: %v", got)
	}
	check("migrate and verify (Store.Files)", got, files, paths(skipped))

	// stats --all.
	got = nil
	var statSkips []string
	total, err := stats.Dir(ctx, sessions, stats.DirOptions{
		CacheDir: t.TempDir(), // the stats index, not in the user's cache
		Header:   func(p string, _ jsonl.Entry) { got = append(got, p) },
		Skip:     func(p string, err error) { statSkips = append(statSkips, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(statSkips)
	check("stats", got, files, statSkips)
	if total.Unread != 2 || total.Sessions != len(files) {
		t.Errorf("stats: %d sessions, %d unread; want %d, 2", total.Sessions, total.Unread, len(files))
	}

	// list --store DIR.
	var warns []error
	infos, err := st.List(ctx, "", engine.ListOptions{NoIndex: true, Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, in := range infos {
		got = append(got, in.Path)
	}
	check("list", got, files, paths(warns))

	// search.
	warns = nil
	x, err := search.Open(ctx, search.Options{NoIndex: true, Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	got = nil
	for h, err := range x.Search(ctx, search.Query{Text: "common", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: sessions}}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Session.Path)
	}
	check("search", got, files, paths(warns))

	// sync: the same walk; the link is not synced, and says so.
	// (Open does not touch the network, nor does the walk.)
	r, err := replica.Open(replica.Options{Remote: "s3://bucket/prefix", AgentDir: agent,
		Backends: s3Backends(s3.Config{Endpoint: "http://127.0.0.1:9", AccessKeyID: "k", SecretAccessKey: "s"})})
	if err != nil {
		t.Fatal(err)
	}
	got, syncSkipped, err := replica.ScanLocal(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	var syncSkips []string
	for _, w := range syncSkipped {
		if w.Key == link {
			continue
		}
		syncSkips = append(syncSkips, w.Key)
	}
	slices.Sort(syncSkips)
	check("sync", got, readable, syncSkips)
	if len(syncSkips) != len(syncSkipped)-1 {
		t.Errorf("sync: the link is not reported as skipped: %v", syncSkipped)
	}

	// An id in the trash is not found, and the lookup says what it could
	// not read.
	_, err = st.Resolve(ctx, "dddd0001")
	if !strings.Contains(err.Error(), unreadable) || !strings.Contains(err.Error(), "1 directory and 1 file could not be read") {
		t.Errorf("resolving a trashed id: %v", err)
	}
	if p, err := st.Resolve(ctx, "cccc"); err != nil || p != c {
		t.Errorf("resolving cccc: %q, %v", p, err)
	}
}

// TestAgentUseSyncSkips: a push replicates every file of an AgentUse
// session directory but says what it passes over, instead of pushing the
// session without it: a message directory that is a symbolic link, a
// session.json that is a named pipe, and the directories of an over-deep
// subagent chain; the rest of each session is still synced.
func TestAgentUseSyncSkips(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	root := filepath.Join(data, "agentuse", "project", "46978ea82b244f74", "session")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	session := func(dir, id string) {
		write(filepath.Join(dir, "session.json"), `{"id":"`+id+`","agent":{"id":"ag","name":"ag"},"time":{"created":1,"updated":1}}`)
		write(filepath.Join(dir, "msg_1", "message.json"), `{"id":"msg_1","time":{"created":1}}`)
		write(filepath.Join(dir, "msg_1", "part", "prt_1.json"), `{"id":"prt_1","type":"text","text":"x"}`)
	}
	a := filepath.Join(root, "01M7ZXJ0KC9S183XADC88B6A01-ag")
	session(a, "01M7ZXJ0KC9S183XADC88B6A01")
	linked := filepath.Join(a, "msg_2")
	moved := filepath.Join(t.TempDir(), "msg_2")
	write(filepath.Join(moved, "message.json"), `{"id":"msg_2","time":{"created":2}}`)
	if err := os.Symlink(moved, linked); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(root, "01M7ZXJ0KC9S183XADC88B6B01-ag")
	session(b, "01M7ZXJ0KC9S183XADC88B6B01")
	pipe := filepath.Join(b, "session.json")
	if err := os.Remove(pipe); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	c := filepath.Join(root, "01M7ZXJ0KC9S183XADC88B6C01-ag")
	session(c, "01M7ZXJ0KC9S183XADC88B6C01")
	deep := testenv.DeepChain(t, c, func(i int) string { return "subagent/" + strings.Repeat("s", 200) }, nil)

	r, err := replica.Open(replica.Options{Remote: "s3://bucket/prefix", AgentUseDir: data,
		Backends: s3Backends(s3.Config{Endpoint: "http://127.0.0.1:9", AccessKeyID: "k", SecretAccessKey: "s"})})
	if err != nil {
		t.Fatal(err)
	}
	got, skipped, err := replica.ScanLocal(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a, b, c}, got); diff != "" {
		t.Errorf("sessions synced (-want +got):\n%s", diff)
	}
	var keys []string
	for _, w := range skipped {
		keys = append(keys, w.Key)
	}
	want := []string{linked, pipe, deep}
	slices.Sort(keys)
	slices.Sort(want)
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("skipped (-want +got):\n%s\n%v", diff, skipped)
	}
}
