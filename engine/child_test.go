package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func reply(at time.Time) *message.Assistant {
	return message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText("ok")}, message.NewUsage(1, 1, 0, 0, message.Cost{}), message.StopStop, at)
}

// TestNewChild makes a subagent's session: its header names the parent's
// file, it lives beside it, and ContinueRecent passes over it only when
// asked to.
func TestNewChild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})
	parent, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	at := time.UnixMilli(1772442003123)
	for _, m := range []message.Message{message.NewUser("delegate", at), reply(at)} {
		must[string](t)(parent.AppendMessage(m))
	}
	child, err := parent.NewChild(t.Context(), engine.ChildOptions{ID: "child-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []message.Message{message.NewUser("subtask", at), reply(at)} {
		must[string](t)(child.AppendMessage(m))
	}
	h := child.Header()
	if !h.HasParentSession || h.ParentSession != parent.SessionFile() || child.SessionID() != "child-1" || child.Cwd() != "/w" {
		t.Errorf("child header %s, id %s, cwd %s; parent %s", h.Raw, child.SessionID(), child.Cwd(), parent.SessionFile())
	}
	if filepath.Dir(child.SessionFile()) != dir {
		t.Errorf("child file %s is not in %s", child.SessionFile(), dir)
	}
	childFile := child.SessionFile()
	if err := child.Close(); err != nil {
		t.Fatal(err)
	}
	// The child was written last, so pi's rule resumes it.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(childFile, future, future); err != nil {
		t.Fatal(err)
	}
	parentFile := parent.SessionFile()
	parent.Close()
	for _, tc := range []struct {
		skip bool
		want string
	}{{false, childFile}, {true, parentFile}} {
		s, err := st.ContinueRecent(t.Context(), "/w", engine.OpenOptions{SkipChildSessions: tc.skip})
		if err != nil {
			t.Fatal(err)
		}
		if s.SessionFile() != tc.want {
			t.Errorf("ContinueRecent(SkipChildSessions=%v) resumed %s, want %s", tc.skip, s.SessionFile(), tc.want)
		}
		s.Close()
	}

	// CreateOptions.ParentSession does the same for Create.
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{ParentSession: parentFile})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h := s.Header(); h.ParentSession != parentFile {
		t.Errorf("Create with ParentSession wrote header %s", h.Raw)
	}
}

// TestUnwrittenSessionLeavesNoLock checks that a session that never
// reached its first write leaves no lock file (nor owner record) behind.
func TestUnwrittenSessionLeavesNoLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) []*engine.Session
	}{
		{"create then close", func(t *testing.T, dir string) []*engine.Session {
			s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(t.Context(), "/w", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			must[string](t)(s.AppendModelChange("p", "m")) // a setup entry: no prompt yet
			return []*engine.Session{s}
		}},
		{"new child never written", func(t *testing.T, dir string) []*engine.Session {
			parent, err := engine.OpenFile(t.Context(), filepath.Join(dir, "parent.jsonl"), engine.OpenOptions{ReadOnly: true, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			child, err := parent.NewChild(t.Context(), engine.ChildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return []*engine.Session{child, parent}
		}},
		{"new session after new session", func(t *testing.T, dir string) []*engine.Session {
			s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(t.Context(), "/w", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.NewSession(t.Context(), engine.NewSessionOptions{}); err != nil {
				t.Fatal(err)
			}
			return []*engine.Session{s}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, s := range tc.make(t, dir) {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			names := dirNames(t, dir)
			if slices.ContainsFunc(names, func(n string) bool { return filepath.Ext(n) == ".lock" || filepath.Ext(n) == ".owner" }) {
				t.Errorf("left behind: %v", names)
			}
			if diff := cmp.Diff([]string(nil), names); diff != "" {
				t.Errorf("directory not empty (-want +got):\n%s", diff)
			}
		})
	}
}
