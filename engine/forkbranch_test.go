package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// fixedOpts gives a store on dir a fixed clock and session id.
func fixedOpts(dir, id string) engine.StoreOptions {
	return engine.StoreOptions{
		Dir:          dir,
		Sync:         engine.SyncNone,
		Now:          func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) },
		NewSessionID: func() string { return id },
	}
}

// TestForkBranch forks one branch of a session (Store.Fork with At).
func TestForkBranch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := createIn(t, fixedOpts(dir, "11111111-1111-4111-8111-111111111111"), "/proj", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := func(text string) message.Message {
		return raw(string(jsonl.NewObject(64).String("role", "user").String("content", text).Number("timestamp", 1).Bytes()))
	}
	asst := raw(string(jsonl.NewObject(64).String("role", "assistant").Raw("content", []byte(`[{"type":"text","text":"ok"}]`)).Bytes()))
	u1 := mustID(t)(s.AppendMessage(user("u1")))
	a1 := mustID(t)(s.AppendMessage(asst))
	mustID(t)(s.AppendLabelChange(u1, "keep"))
	mustID(t)(s.AppendMessage(user("u2")))
	src := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("at an entry, into the source directory", func(t *testing.T) {
		ns, err := openStore(t, fixedOpts(dir, "22222222-2222-4222-8222-222222222222")).Fork(t.Context(), src, engine.ForkOptions{At: a1})
		if err != nil {
			t.Fatal(err)
		}
		file := ns.SessionFile()
		if err := ns.Close(); err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(file) != dir {
			t.Errorf("new file %s not in %s", file, dir)
		}
		re, err := engine.OpenFile(t.Context(), file, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer re.Close()
		h := re.Header()
		if h.ParentSession != src || h.Cwd != "/proj" || !h.HasParentSession {
			t.Errorf("header = %+v", h)
		}
		var types []string
		for _, e := range re.Entries() {
			types = append(types, e.Type)
		}
		// u1, a1, then the re-created label for u1.
		if diff := cmp.Diff([]string{"message", "message", "label"}, types); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
		if l, _ := re.Label(u1); l != "keep" {
			t.Errorf("label = %q", l)
		}
		if n := len(re.Context().Messages); n != 2 {
			t.Errorf("context has %d messages, want 2", n)
		}
	})

	t.Run("a path without an assistant message is written too, into the cwd's directory", func(t *testing.T) {
		agent := t.TempDir()
		o := fixedOpts("", "33333333-3333-4333-8333-333333333333")
		o.AgentDir = agent
		ns, err := openStore(t, o).Fork(t.Context(), src, engine.ForkOptions{At: u1, Cwd: "/other"})
		if err != nil {
			t.Fatal(err)
		}
		file := ns.SessionFile()
		ns.Close()
		if want := layout.DefaultSessionDir(agent, "/other"); filepath.Dir(file) != want {
			t.Errorf("new file in %s, want %s", filepath.Dir(file), want)
		}
		re, err := engine.OpenFile(t.Context(), file, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer re.Close()
		if h := re.Header(); h.Cwd != "/other" {
			t.Errorf("cwd = %q", h.Cwd)
		}
		if leaf, _ := re.LeafID(); leaf == u1 {
			t.Errorf("leaf is %s, want the re-created label", leaf)
		}
	})

	t.Run("unknown entry", func(t *testing.T) {
		_, err := openStore(t, fixedOpts("", "44444444-4444-4444-8444-444444444444")).Fork(t.Context(), src, engine.ForkOptions{At: "nope"})
		if !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Fork = %v, want ErrNotFound", err)
		}
	})
}

func TestTrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "2026-03-01T09-00-00-000Z_abc.jsonl")
	stale := file + ".tmp-0123456789abcdef" // an interrupted migration's output
	for _, name := range []string{file, file + ".v1.bak", file + ".v1.bak.1", file + ".v1.bak.x", file + ".torn-1772355600000",
		file + ".torn-1772355600000.tmp-fedcba9876543210", file + ".other", file + ".v2.bak.tmp-1", stale, file + ".tmp-0123"} {
		if err := os.WriteFile(name, []byte(`{"type":"session","version":3,"id":"abc","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The store's trash, for the time of the deletion.
	st := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone,
		Now: func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }})
	trash := filepath.Join(dir, ".trash", "2026-03-01T09-00-00-000Z")

	// A writer holds the session: Trash refuses.
	w, err := st.Open(t.Context(), file, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Trash(t.Context(), file, engine.TrashOptions{}); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("Trash while locked = %v, want ErrLocked", err)
	}
	// Waiting, it gives up when its context ends. (Whether it found the
	// lock held first depends on how soon it ran: on a loaded machine the
	// deadline can pass before its first try, so only the deadline is
	// asserted; the refusal itself is asserted above.)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := st.Trash(ctx, file, engine.TrashOptions{Wait: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Trash waiting until a deadline = %v, want DeadlineExceeded", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("file gone after a refused Trash: %v", err)
	}
	w.Close()

	moved, err := st.Trash(t.Context(), file, engine.TrashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range moved {
		got = append(got, filepath.Base(m.To))
		if filepath.Dir(m.To) != trash {
			t.Errorf("moved to %s", m.To)
		}
	}
	base := filepath.Base(file)
	want := []string{base, base + ".tmp-0123456789abcdef", base + ".torn-1772355600000",
		base + ".torn-1772355600000.tmp-fedcba9876543210", base + ".v1.bak", base + ".v1.bak.1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, d := range left {
		names = append(names, d.Name())
	}
	for _, keep := range []string{base + ".other", base + ".v2.bak.tmp-1", base + ".v1.bak.x", base + ".tmp-0123", ".trash"} {
		if !slices.Contains(names, keep) {
			t.Errorf("%s should stay, directory has %v", keep, names)
		}
	}
	// The lock file and owner record go too: Trash removed them while it
	// held the lock.
	for _, gone := range []string{base + ".lock", base + ".owner"} {
		if slices.Contains(names, gone) {
			t.Errorf("%s should be gone, directory has %v", gone, names)
		}
	}
	if _, err := st.Trash(t.Context(), file, engine.TrashOptions{}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Trash of a missing file = %v, want ErrNotFound", err)
	}
}

// TestForkOutsideTheStore: a fork of a file outside the store goes into
// the store (its directory for the source's cwd), as pi's forkFrom writes
// into the session directory it is given, not beside the source; and
// ForkFile leaves no lock file beside the fork.
func TestForkOutsideTheStore(t *testing.T) {
	t.Parallel()
	elsewhere, storeDir := t.TempDir(), t.TempDir()
	s, err := createIn(t, fixedOpts(elsewhere, "11111111-1111-4111-8111-111111111111"), "/proj", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u1 := mustID(t)(s.AppendMessage(message.NewUser("u1", time.Unix(1, 0))))
	mustID(t)(s.AppendMessage(raw(string(jsonl.NewObject(64).String("role", "assistant").Raw("content", []byte(`[{"type":"text","text":"ok"}]`)).Bytes()))))
	src := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, o := range []engine.ForkOptions{{}, {At: u1}} {
		st := openStore(t, fixedOpts(storeDir, fmt.Sprintf("2222222%d-2222-4222-8222-222222222222", i)))
		ff, err := st.ForkFile(t.Context(), src, o)
		if err != nil {
			t.Fatalf("ForkFile %+v: %v", o, err)
		}
		if filepath.Dir(ff.Path) != storeDir {
			t.Errorf("ForkFile %+v wrote %s, not into the store %s", o, ff.Path, storeDir)
		}
		st = openStore(t, fixedOpts(storeDir, fmt.Sprintf("3333333%d-3333-4333-8333-333333333333", i)))
		ns, err := st.Fork(t.Context(), src, o)
		if err != nil {
			t.Fatalf("Fork %+v: %v", o, err)
		}
		if filepath.Dir(ns.SessionFile()) != storeDir {
			t.Errorf("Fork %+v wrote %s, not into the store %s", o, ns.SessionFile(), storeDir)
		}
		if err := ns.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), "_2222222") && !strings.HasSuffix(e.Name(), ".jsonl") {
			t.Errorf("%s stays in the store after ForkFile", e.Name())
		}
	}
}
