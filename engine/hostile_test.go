package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

const hdr = `{"type":"session","version":3,"id":"00000000-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"

func msgLine(id, parent, content string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + content + `,"timestamp":1}}` + "\n"
}

func writeSession(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(hdr+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func openRO(t *testing.T, p string) *engine.Session {
	t.Helper()
	s, err := engine.OpenFile(context.Background(), p, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Each hostile input gives a tolerant result or a clear error; none
// panics, hangs or writes outside the store.
func TestHostileInputs(t *testing.T) {
	t.Parallel()
	t.Run("a 200 MB single line", func(t *testing.T) {
		// 200 MB in make stress (CI); 20 MB in every go test.
		size := 20 << 20
		if testenv.Stress() {
			size = 200 << 20
		}
		big := `"` + strings.Repeat("abcdefgh", size/8) + `"`
		s := openRO(t, writeSession(t, msgLine("a1", "", big)))
		c := s.Context()
		if len(c.Messages) != 1 || len(c.Messages[0].Raw) < size {
			t.Fatalf("the long line was not read whole: %d messages", len(c.Messages))
		}
	})
	t.Run("invalid UTF-8 is kept, not fatal", func(t *testing.T) {
		t.Parallel()
		p := writeSession(t, msgLine("a1", "", "\"bad \xff\xfe bytes\"")+msgLine("a2", "a1", `"fine"`))
		s := openRO(t, p)
		if got := len(s.Entries()); got != 2 {
			t.Fatalf("%d entries, want 2", got)
		}
		if e, _ := s.Entry("a1"); !bytes.Contains(e.Raw, []byte("\xff\xfe")) {
			t.Error("the bytes as read were not kept")
		}
	})
	t.Run("duplicate keys: the last wins, as in JSON.parse", func(t *testing.T) {
		t.Parallel()
		line := `{"type":"message","id":"first","parentId":null,"id":"second","timestamp":"t","message":{"role":"user","role":"assistant","content":"x"}}` + "\n"
		s := openRO(t, writeSession(t, line))
		e, ok := s.Entry("second")
		if !ok || e.Role != "assistant" {
			t.Fatalf("entry %v role %q: want id second, role assistant", ok, e.Role)
		}
	})
	t.Run("nesting 100,000 deep", func(t *testing.T) {
		t.Parallel()
		deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
		s := openRO(t, writeSession(t, msgLine("a1", "", deep)))
		if len(s.Context().Messages) != 1 {
			t.Fatal("deeply nested message not read")
		}
		// And as caller data, encoded for a new entry.
		w, err := openStore(t, engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone}).Create(context.Background(), "/w", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.AppendCustomEntry("deep", []byte(deep)); err != nil {
			t.Fatalf("append of deep data: %v", err)
		}
	})
	t.Run("a million siblings", func(t *testing.T) {
		// A million in make stress (CI), without the race detector, which
		// makes the full size take minutes; 100,000 in every go test.
		n := 100000
		if testenv.Stress() && !raceEnabled {
			n = 1000000
		}
		var b strings.Builder
		b.WriteString(msgLine("root", "", `"r"`))
		for i := range n {
			fmt.Fprintf(&b, `{"type":"label","id":"c%d","parentId":"root","timestamp":"t","targetId":"root","label":"x"}`+"\n", i)
		}
		s := openRO(t, writeSession(t, b.String()))
		if got := len(s.Children("root")); got != n {
			t.Fatalf("%d children, want %d", got, n)
		}
		if roots := s.Tree(); len(roots) != 1 || len(roots[0].Children) != n {
			t.Fatal("tree of a million siblings is wrong")
		}
	})
	t.Run("parent cycles and self parents end", func(t *testing.T) {
		t.Parallel()
		body := msgLine("a", "b", `"a"`) + msgLine("b", "a", `"b"`) + msgLine("s", "s", `"self"`) + msgLine("z", "a", `"leaf"`)
		s := openRO(t, writeSession(t, body))
		if got := len(s.BranchPath("z")); got != 3 {
			t.Errorf("branch through a cycle has %d entries, want 3 (each once)", got)
		}
		if got := len(s.Context().Messages); got != 3 {
			t.Errorf("context through a cycle has %d messages, want 3", got)
		}
		if len(s.BranchPath("s")) != 1 {
			t.Error("self-parented entry's branch is not just itself")
		}
	})
	t.Run("ids with separators, dot-dot or NUL never touch a path", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(context.Background(), "/w", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, id := range []string{"../escape", "a/b", "..", "a\x00b", `a\b`} {
			if _, err := s.NewSession(context.Background(), engine.NewSessionOptions{ID: id}); !errors.Is(err, layout.ErrUnsafeName) {
				t.Errorf("NewSession(%q): %v, want ErrUnsafeName", id, err)
			}
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.jsonl")); err == nil {
			t.Error("a file was written outside the store")
		}
	})
	t.Run("a named pipe among the sessions is skipped, not waited on", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Dir(writeSession(t, msgLine("a1", "", `"hi"`)))
		if err := mkfifo(filepath.Join(dir, "pipe.jsonl")); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan []engine.Info, 1)
		go func() {
			infos, _ := openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", engine.ListOptions{NoIndex: true, EveryCwd: true})
			done <- infos
		}()
		select {
		case infos := <-done:
			if len(infos) != 1 {
				t.Fatalf("%d sessions listed, want the one regular file", len(infos))
			}
		case <-time.After(20 * time.Second):
			t.Fatal("listing waits on the named pipe")
		}
	})
	t.Run("a symlink at the session path is refused for writing", func(t *testing.T) {
		t.Parallel()
		testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
		dir := t.TempDir()
		target := filepath.Join(dir, "elsewhere.jsonl")
		os.WriteFile(target, []byte(hdr), 0o600)
		link := filepath.Join(dir, "s.jsonl")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.OpenFile(context.Background(), link, engine.OpenOptions{}); !errors.Is(err, vfs.ErrSymlink) {
			t.Fatalf("write-mode open through a symlink: %v, want ErrSymlink", err)
		}
		if data, _ := os.ReadFile(target); string(data) != hdr {
			t.Error("the symlink's target was changed")
		}
	})
	t.Run("a symlink at the quarantine path is refused", func(t *testing.T) {
		t.Parallel()
		testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
		dir := t.TempDir()
		p := filepath.Join(dir, "s.jsonl")
		os.WriteFile(p, []byte(hdr+`{"type":"message","id":"tor`), 0o600)
		victim := filepath.Join(dir, "victim")
		os.WriteFile(victim, []byte("keep"), 0o600)
		at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Symlink(victim, fmt.Sprintf("%s.torn-%d", p, at.UnixMilli())); err != nil {
			t.Fatal(err)
		}
		// The open changes nothing; the first write cuts the torn tail,
		// and refuses to when its bytes cannot be kept.
		s, err := openStore(t, engine.StoreOptions{Now: func() time.Time { return at }}).Open(context.Background(), p, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.AppendMessage(raw(`{"role":"user","content":"x"}`))
		s.Close()
		if !errors.Is(err, vfs.ErrSymlink) {
			t.Fatalf("first append: %v, want ErrSymlink", err)
		}
		if data, _ := os.ReadFile(victim); string(data) != "keep" {
			t.Fatal("the quarantine wrote through a planted symlink")
		}
		if data, _ := os.ReadFile(p); !strings.HasSuffix(string(data), `"id":"tor`) {
			t.Fatal("the torn tail was cut although it could not be kept")
		}
	})
	t.Run("a read-only filesystem gives a clear error and writes nothing", func(t *testing.T) {
		t.Parallel()
		testenv.SkipOnWindows(t, "the test's read-only filesystem (EROFS) is a POSIX error")
		cfs := vfstest.NewCrashFS()
		ffs := vfstest.NewFaultFS(cfs)
		ffs.Inject(vfstest.Fault{Op: vfstest.OpCreate, Err: syscall.EROFS, Repeat: true})
		s, err := openStore(t, engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: "/store"})).Create(context.Background(), "/w", engine.CreateOptions{})
		if err == nil {
			_, err = s.AppendMessage(raw(`{"role":"assistant","content":"x"}`))
			s.Close()
		}
		if !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), "/store") {
			t.Fatalf("err %v: want EROFS naming the store", err)
		}
	})
	t.Run("a full disk: the append fails and is cut off, the session refuses more, a reopen recovers", func(t *testing.T) {
		t.Parallel()
		cfs := vfstest.NewCrashFS()
		ffs := vfstest.NewFaultFS(cfs)
		opts := engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: "/store"})
		s, err := openStore(t, opts).Create(context.Background(), "/w", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"one"}`)); err != nil {
			t.Fatal(err)
		}
		ffs.Inject(vfstest.DiskFull(1))
		if _, err := s.AppendMessage(raw(`{"role":"user","content":"` + strings.Repeat("z", 5000) + `"}`)); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append on a full disk: %v", err)
		}
		ffs.Clear()
		if _, err := s.AppendMessage(raw(`{"role":"user","content":"after"}`)); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append after a failed one: %v, want the same sticky error", err)
		}
		file := s.SessionFile()
		s.Close()
		r, err := openStore(t, opts).Open(context.Background(), file, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.AppendMessage(raw(`{"role":"user","content":"recovered"}`)); err != nil {
			t.Fatalf("append after reopen: %v", err)
		}
		// The failed append cut off what it wrote: nothing to repair.
		if rec := r.Recovery(); rec.TornBytes != 0 {
			t.Errorf("the half-written line was left for the reopen: %+v", rec)
		}
	})
}

// Many goroutines append to one session while others open, read and list
// it: no append is lost, ids stay unique in one chain, and readers never
// fail or see a partial line.
func TestConcurrentAppendersAndReaders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"start"}`)); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 150
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readErr error
	var mu sync.Mutex
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := engine.OpenFile(context.Background(), s.SessionFile(), engine.OpenOptions{ReadOnly: true})
				if err == nil {
					if m := r.Recovery().Malformed; m != 0 {
						err = fmt.Errorf("reader saw %d malformed lines", m)
					}
					_ = r.Context()
					r.Close()
				}
				if err == nil {
					_, err = openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", engine.ListOptions{NoIndex: true})
				}
				if err != nil {
					mu.Lock()
					readErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	var aw sync.WaitGroup
	for w := range writers {
		aw.Go(func() {
			for i := range each {
				if _, err := s.AppendMessage(raw(fmt.Sprintf(`{"role":"user","content":"w%d-%d"}`, w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	aw.Wait()
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("a reader failed: %v", readErr)
	}
	file := s.SessionFile()
	s.Close()
	r := openRO(t, file)
	entries := r.Entries()
	if len(entries) != 1+writers*each {
		t.Fatalf("%d entries, want %d", len(entries), 1+writers*each)
	}
	if got := len(r.BranchPath("")); got != len(entries) {
		t.Fatalf("the appends do not form one chain: branch of %d", got)
	}
}
