package engine_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestAppendMessageRefusesWhatPiCannotRead: a message that is not a JSON
// object with one of pi's roles is refused and nothing is written (pi's
// list drops a session holding one, and its open throws on a null
// message); a message of a known role, typed or kept as JSON, goes in.
func TestAppendMessageRefusesWhatPiCannotRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := openStore(t, engine.StoreOptions{Sync: engine.SyncNone})
	s, err := st.Create(ctx, "/w", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.UnixMilli(1772355600000)
	if _, err := s.AppendMessage(message.NewUser("q", at)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(s.SessionFile())
	if err != nil {
		t.Fatal(err)
	}
	var nilUser *message.User
	for _, tc := range []struct {
		name string
		m    message.Message
		want string
	}{
		{"nil", nil, "the message is nil"},
		{"a nil pointer", nilUser, "nil *message.User"},
		{"a string", &message.Unknown{Raw: []byte(`"x"`)}, "not a JSON object"},
		{"null", &message.Unknown{Raw: []byte(`null`)}, "not a JSON object"},
		{"no role", &message.Unknown{Raw: []byte(`{"content":"hi"}`)}, "no string role"},
		{"a role that is not a string", &message.Unknown{Raw: []byte(`{"role":7}`)}, "no string role"},
		{"an unknown role", &message.Unknown{Raw: []byte(`{"role":"hook","content":"hi"}`)}, `role "hook"`},
	} {
		id, err := s.AppendMessage(tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "append message: ") {
			t.Errorf("%s: appended %q, %v; want an error saying %q", tc.name, id, err, tc.want)
		}
	}
	if after, _ := os.ReadFile(s.SessionFile()); string(after) != string(before) {
		t.Errorf("refused messages changed the file:\n%s", after)
	}
	if n := len(s.Entries()); n != 1 {
		t.Errorf("%d entries after the refusals, want 1", n)
	}
	for _, m := range []message.Message{reply(at), &message.Unknown{Raw: []byte(`{"role":"custom","customType":"x","content":"c","display":true,"timestamp":1}`)}} {
		if _, err := s.AppendMessage(m); err != nil {
			t.Errorf("%s message refused: %v", m.Role(), err)
		}
	}
}

// TestNoLockBesideWhatIsNotASession: looking at a store (listing, lookups,
// read-only opens, tails, contexts, the walk) and failing to open, migrate,
// fork or trash what is not a session leave no lock file, nor owner
// record, anywhere: not beside a file that is not a session, a missing
// path, or a session that was only read.
func TestNoLockBesideWhatIsNotASession(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	session := write("s.jsonl", followHeader+userLine("a", "", "one")+"\n")
	garbage := write("garbage.jsonl", "garbage\n")
	newer := write("v9.jsonl", `{"type":"session","version":9,"id":"v9","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`+"\n")
	other := write("notes.jsonl", `{"some":"other program's JSONL"}`+"\n")
	if err := os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "typo.jsonl")
	st := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})

	// Only looked at.
	if _, err := st.List(ctx, "", engine.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for range st.Sessions(ctx, "", engine.ListOptions{}) {
	}
	for range st.Files(ctx) {
	}
	for _, name := range []string{session, garbage, newer, other, missing, "f0000000", "nosuchid"} {
		_, _ = st.Resolve(ctx, name)
		_, _ = st.Info(ctx, name)
		if s, err := st.Open(ctx, name, engine.OpenOptions{ReadOnly: true}); err == nil {
			s.Close()
		}
		if tl, err := st.Tail(ctx, name, 2); err == nil {
			tl.Close()
		}
		_, _ = engine.ReadContext(ctx, name, "", engine.OpenOptions{})
	}
	// Write-mode opens, migrations, forks and trashes of what is not a
	// session, or not there, fail.
	for _, name := range []string{garbage, newer, other, missing, filepath.Join(dir, "dir.jsonl")} {
		if s, err := st.Open(ctx, name, engine.OpenOptions{}); err == nil {
			s.Close()
			t.Errorf("a write-mode open of %s succeeded", filepath.Base(name))
		}
		if _, err := st.Migrate(ctx, name, engine.MigrateOptions{}); err == nil && name != other {
			t.Errorf("a migration of %s succeeded", filepath.Base(name))
		}
		if s, err := st.Fork(ctx, name, engine.ForkOptions{}); err == nil {
			s.Close()
			t.Errorf("a fork of %s succeeded", filepath.Base(name))
		}
	}
	if _, err := st.Trash(ctx, missing, engine.TrashOptions{}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("trash of a missing path: %v", err)
	}
	var left []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".lock") || strings.HasSuffix(p, ".owner") || strings.Contains(p, ".lock.") {
			left = append(left, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("lock files left: %v", left)
	}
	// The session itself was never opened for writing: it has none either.
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"dir.jsonl", "garbage.jsonl", "notes.jsonl", "s.jsonl", "v9.jsonl"}; !slices.Equal(names, want) {
		t.Errorf("the store holds %v, want %v", names, want)
	}
}
