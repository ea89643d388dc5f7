package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/message"
)

// legacyV1 is a version 1 session: no ids, no version.
const legacyV1 = `{"type":"session","id":"00000000-0000-4000-8000-0000000000aa","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}
{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"timestamp":2}}
`

// dirState is every file of a directory but the lock's (lock file and
// owner record), with its bytes.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".lock") || strings.HasSuffix(d.Name(), ".owner") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[d.Name()] = string(b)
	}
	return out
}

// A write-mode open changes nothing, and neither does a call that fails:
// the repairs an open used to make at once (migration, header of an empty
// file, final newline, cutting a torn tail, removing stale temporary
// files) wait for the first write that gets past its argument checks.
func TestFailedCallsLeaveTheFileAlone(t *testing.T) {
	t.Parallel()
	files := []struct {
		name string
		data string
		// after the first successful write
		check func(t *testing.T, s *engine.Session, dir string)
	}{
		{"torn tail", hdr + msgLine("a1", "", `"x"`) + `{"type":"message","id":"to`, func(t *testing.T, s *engine.Session, dir string) {
			if rec := s.Recovery(); rec.TornBytes == 0 || rec.Quarantine == "" {
				t.Errorf("recovery %+v, want the torn tail cut", rec)
			}
		}},
		{"no final newline", hdr + strings.TrimSuffix(msgLine("a1", "", `"x"`), "\n"), func(t *testing.T, s *engine.Session, dir string) {
			if !s.Recovery().NewlineAdded {
				t.Errorf("recovery %+v, want NewlineAdded", s.Recovery())
			}
		}},
		{"empty", "", func(t *testing.T, s *engine.Session, dir string) {
			if !s.Recovery().Initialized {
				t.Errorf("recovery %+v, want Initialized", s.Recovery())
			}
		}},
		{"version 1", legacyV1, func(t *testing.T, s *engine.Session, dir string) {
			if rec := s.Recovery(); !rec.Migrated || rec.Backup == "" {
				t.Errorf("recovery %+v, want Migrated with a backup", rec)
			}
		}},
		{"stale temporary files", hdr + msgLine("a1", "", `"x"`), func(t *testing.T, s *engine.Session, dir string) {
			if _, err := os.Stat(filepath.Join(dir, "s.jsonl.tmp-0123456789abcdef")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stale temporary file is still there: %v", err)
			}
		}},
	}
	calls := []struct {
		name string
		call func(s *engine.Session) error
		want error
	}{
		{"label of an unknown entry", func(s *engine.Session) error {
			l := "x"
			_, err := s.AppendLabelChange("nosuchid", l)
			return err
		}, engine.ErrNotFound},
		{"branch to an unknown entry", func(s *engine.Session) error {
			id := "nosuchid"
			_, err := s.BranchWithSummary(engine.BranchSummary{FromID: id, Summary: "s"})
			return err
		}, engine.ErrNotFound},
		{"a message that is not JSON", func(s *engine.Session) error {
			_, err := s.AppendMessage(&message.Unknown{Raw: []byte(`{"role":`)})
			return err
		}, jsonl.ErrSyntax},
		{"a compaction whose details cannot be encoded", func(s *engine.Session) error {
			_, err := s.AppendCompaction(engine.Compaction{Summary: "s", Details: func() {}})
			return err
		}, nil},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "s.jsonl")
			dir := filepath.Dir(p)
			if err := os.WriteFile(p, []byte(f.data), 0o600); err != nil {
				t.Fatal(err)
			}
			if f.name == "stale temporary files" {
				if err := os.WriteFile(p+".tmp-0123456789abcdef", []byte("half a migration"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := dirState(t, dir)
			at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone, Now: func() time.Time { return at }}).Open(context.Background(), p, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if diff := cmp.Diff(before, dirState(t, dir)); diff != "" {
				t.Fatalf("the write-mode open changed the directory (-before +after):\n%s", diff)
			}
			for _, c := range calls {
				err := c.call(s)
				if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
					t.Errorf("%s: %v, want %v", c.name, err, c.want)
				}
				if diff := cmp.Diff(before, dirState(t, dir)); diff != "" {
					t.Fatalf("%s failed but changed the directory (-before +after):\n%s", c.name, diff)
				}
			}
			// The first write that gets through makes the repairs.
			id, err := s.AppendSessionInfo("named")
			if err != nil {
				testenv.SkipUnderWineIf(t, errors.Is(err, vfs.ErrInUse), testenv.WineRename)
				t.Fatal(err)
			}
			f.check(t, s, dir)
			s.Close()
			r := openRO(t, p)
			if leaf, _ := r.LeafID(); leaf != id {
				t.Errorf("leaf after reload %s, want the appended %s", leaf, id)
			}
			if n, _ := r.Name(); n != "named" {
				t.Errorf("name %q after reload", n)
			}
			if data, _ := os.ReadFile(p); jsonl.ParseFile(data).Tail != jsonl.TailClean {
				t.Errorf("the file does not end cleanly: %q", data)
			}
		})
	}
}

// The entries a write-mode open of a version 1 or 2 file holds before the
// first write are the ones the migration rewrite writes, so an id the
// caller took from the session stays valid across the rewrite.
func TestDeferredMigrationKeepsTheEntries(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(legacyV1), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(context.Background(), p, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var before []string
	for _, e := range s.Entries() {
		before = append(before, string(e.Raw))
	}
	first := s.Entries()[0].ID
	l := "first question"
	if _, err := s.AppendLabelChange(first, l); err != nil {
		testenv.SkipUnderWineIf(t, errors.Is(err, vfs.ErrInUse), testenv.WineRename)
		t.Fatalf("label of %s, taken before the migration rewrite: %v", first, err)
	}
	var after []string
	for _, e := range s.Entries()[:len(before)] {
		after = append(after, string(e.Raw))
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("entries before and after the rewrite differ (-before +after):\n%s", diff)
	}
	if got, ok := openRO(t, p).Label(first); !ok || got != l {
		t.Errorf("label after reload %q, %v", got, ok)
	}
}

// A session whose file was never written leaves no lock file behind.
func TestUnwrittenSessionLeavesNoLockFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		open func(t *testing.T, dir string) *engine.Session
	}{
		{"open of a missing path as a new session", func(t *testing.T, dir string) *engine.Session {
			s, err := engine.OpenFile(context.Background(), filepath.Join(dir, "new.jsonl"), engine.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"create without a user or assistant message", func(t *testing.T, dir string) *engine.Session {
			s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(context.Background(), "/w", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendModelChange("p", "m"); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"new session replacing a written one", func(t *testing.T, dir string) *engine.Session {
			s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(context.Background(), "/w", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.NewSession(context.Background(), engine.NewSessionOptions{}); err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := c.open(t, dir)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			left, _ := os.ReadDir(dir)
			var names []string
			for _, d := range left {
				names = append(names, d.Name())
			}
			if len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
	t.Run("a written session keeps its lock file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(context.Background(), "/w", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"hi","timestamp":1}`)); err != nil {
			t.Fatal(err)
		}
		file := s.SessionFile()
		s.Close()
		if _, err := os.Stat(sessionfile.LockPath(file)); err != nil {
			t.Errorf("lock file: %v", err)
		}
	})
}

// A migration killed before its rename leaves <file>.tmp-<hex>; the next
// migration (or write) of the session holds the lock, so it knows the
// file is stale and removes it.
func TestMigrateRemovesStaleTemps(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(legacyV1), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := p + ".tmp-00112233aabbccdd"
	if err := os.WriteFile(stale, []byte(`{"type":"session","version":3`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(t, engine.StoreOptions{}).Migrate(context.Background(), p, engine.MigrateOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a dry run, which takes no lock, removed %s: %v", stale, err)
	}
	res, err := openStore(t, engine.StoreOptions{}).Migrate(context.Background(), p, engine.MigrateOptions{})
	if err != nil || !res.Migrated {
		t.Fatalf("migrate: %+v, %v", res, err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", stale, err)
	}
}
