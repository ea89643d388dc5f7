package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// A store opened on a Dir shares that directory among every cwd, and
// never hands one project another's session (issue 42, 2): ContinueRecent
// resumes only a session of its cwd, and creates one where the cwd has
// none.
func TestDirStoreKeepsProjectsApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone})
	mk := func(cwd, text string) string {
		s, err := st.Create(ctx, cwd, engine.CreateOptions{WriteAtOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.AppendMessage(raw(`{"role":"user","content":"` + text + `","timestamp":1}`))
		return s.SessionFile()
	}
	c1 := mk("/home/dev/c1", "in c1")
	time.Sleep(20 * time.Millisecond) // c12's is the newer file
	c12 := mk("/home/dev/c12", "in c12")
	s, err := st.ContinueRecent(ctx, "/home/dev/c1", engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionFile() != c1 {
		t.Errorf("ContinueRecent(c1) resumed %s, want c1's %s", s.SessionFile(), c1)
	}
	s.Close()
	// The listing is the directory's, as pi's list(cwd, sessionDir),
	// each session naming its cwd.
	if infos, err := st.List(ctx, "/home/dev/c1", engine.ListOptions{}); err != nil || len(infos) != 2 {
		t.Errorf("List(c1): %d sessions, %v; want the directory's 2", len(infos), err)
	}
	s, err = st.ContinueRecent(ctx, "/home/dev/c3", engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.SessionFile() == c1 || s.SessionFile() == c12 {
		t.Errorf("ContinueRecent of a cwd without a session resumed %s", s.SessionFile())
	}
}
