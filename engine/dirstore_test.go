package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// A store opened on a Dir shares that directory among every cwd, and
// never hands one project another's session (issue 42, 2): ContinueRecent
// resumes only a session of its cwd (creating one where the cwd has
// none), and List and Sessions with a cwd list only that cwd's, as pi
// 1.x does; List with "" every one.
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
	for cwd, want := range map[string]string{"/home/dev/c1": c1, "/home/dev/c12": c12} {
		infos, err := st.List(ctx, cwd, engine.ListOptions{})
		if err != nil || len(infos) != 1 || infos[0].Path != want {
			t.Errorf("List(%s): %v %v, want only %s", cwd, infos, err, want)
		}
		n := 0
		for i, err := range st.Sessions(ctx, cwd, engine.ListOptions{}) {
			if err != nil || i.Path != want {
				t.Errorf("Sessions(%s) gave %v %v", cwd, i, err)
			}
			n++
		}
		if n != 1 {
			t.Errorf("Sessions(%s) gave %d sessions, want 1", cwd, n)
		}
	}
	if every, err := st.List(ctx, "/home/dev/c1", engine.ListOptions{EveryCwd: true}); err != nil || len(every) != 2 {
		t.Errorf("List(c1) with EveryCwd: %d sessions, %v; want the directory's 2", len(every), err)
	}
	if all, err := st.List(ctx, "", engine.ListOptions{}); err != nil || len(all) != 2 {
		t.Errorf("List(\"\"): %d sessions, %v; want both", len(all), err)
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
