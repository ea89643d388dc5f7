package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

const followHeader = `{"type":"session","version":3,"id":"f0000000-0000-4000-8000-000000000001","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}` + "\n"

func userLine(id, parent, text string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}`
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func ids(es []*engine.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestRefresh follows a file another process (pi, by hand) appends to.
func TestRefresh(t *testing.T) {
	t.Parallel()
	type step struct {
		do        func(t *testing.T, path string)
		news      []string // ids Refresh returns
		all, leaf string   // then: the number of entries, the leaf
	}
	add := func(s string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) { appendTo(t, path, s) }
	}
	for _, tc := range []struct {
		name  string
		start string
		steps []step
	}{
		{"appended lines", followHeader + userLine("a", "", "one") + "\n", []step{
			{nil, nil, "1", "a"},
			{add(userLine("b", "a", "two") + "\n" + userLine("c", "b", "three") + "\n"), []string{"b", "c"}, "3", "c"},
			{nil, nil, "3", "c"},
			{add("\n" + "not json\n" + userLine("d", "c", "four") + "\n"), []string{"d"}, "4", "d"},
		}},
		{"torn line waits for its end", followHeader + userLine("a", "", "one") + "\n", []step{
			{add(`{"type":"message","id":"b","par`), nil, "1", "a"},
			{add(`entId":"a","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n"), []string{"b"}, "2", "b"},
		}},
		{"complete line without newline is read at once", followHeader, []step{
			{add(userLine("a", "", "one")), []string{"a"}, "1", "a"},
			{add("\n"), nil, "1", "a"},
			{add(userLine("b", "a", "two") + "\n"), []string{"b"}, "2", "b"},
		}},
		{"replaced file is read again", followHeader + userLine("a", "", "one") + "\n", []step{
			{func(t *testing.T, path string) {
				tmp := path + ".new"
				if err := os.WriteFile(tmp, []byte(followHeader+userLine("a", "", "one")+"\n"+userLine("b", "a", "two")+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}, []string{"b"}, "2", "b"},
		}},
		{"version 1 file is read again", `{"type":"session","id":"f0000000-0000-4000-8000-000000000002","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}` + "\n" +
			`{"type":"message","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}` + "\n", []step{
			{add(`{"type":"message","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"r","timestamp":2}}` + "\n"), nil, "2", ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(tc.start), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, st := range tc.steps {
				if st.do != nil {
					st.do(t, path)
				}
				news, err := s.Refresh()
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				leaf, _ := s.LeafID()
				if tc.name == "version 1 file is read again" {
					// Migrated ids are random: check the count only.
					news, leaf = nil, ""
				}
				got := []any{ids(news), itoa(len(s.Entries())), leaf}
				want := []any{st.news, st.all, st.leaf}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestRefreshVanishedAndWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(followHeader), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := openStore(t, engine.StoreOptions{Sync: engine.SyncNone}).Open(t.Context(), path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if news, err := w.Refresh(); err != nil || news != nil {
		t.Errorf("Refresh of a writer = %v, %v; want nothing", news, err)
	}
	w.Close()
	r, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Refresh(); !errors.Is(err, engine.ErrVanished) {
		t.Errorf("Refresh of a removed file = %v, want ErrVanished", err)
	}
}

// TestFollow reads, through Follow, what a writer appends, typed.
func TestFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone}).Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := engine.OpenFile(t.Context(), w.SessionFile(), engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	at := time.UnixMilli(1772442003123)
	go func() {
		for _, m := range []message.Message{message.NewUser("one", at), reply(at), message.NewUser("two", at)} {
			if _, err := w.AppendMessage(m); err != nil {
				t.Error(err)
			}
		}
	}()
	var roles []string
	for e, err := range r.Follow(ctx, time.Millisecond) {
		if err != nil {
			t.Fatal(err)
		}
		m, err := message.Decode(e.Message())
		if err != nil {
			t.Fatal(err)
		}
		roles = append(roles, m.Role())
		if len(roles) == 3 {
			cancel()
		}
	}
	if diff := cmp.Diff([]string{"user", "assistant", "user"}, roles); diff != "" {
		t.Errorf("followed (-want +got):\n%s", diff)
	}
}
