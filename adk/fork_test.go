package adk

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// entryOf returns the id of the entry holding the event evID.
func entryOf(t *testing.T, path, evID string) string {
	t.Helper()
	v, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, e := range v.Entries() {
		var m struct{ Adk struct{ ID string } }
		if json.Unmarshal(e.Message(), &m) == nil && m.Adk.ID == evID {
			return e.ID
		}
	}
	t.Fatalf("no entry holds event %s", evID)
	return ""
}

func eventIDs(t *testing.T, s *Service, id string) []string {
	t.Helper()
	got, err := s.Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for ev := range got.Session.Events().All() {
		ids = append(ids, ev.ID)
	}
	return ids
}

// TestForkAndBranch: a session forked with sessctl (at an event) is
// another ADK session of the same user holding the events up to there;
// a session branched in place (a branch summary back at an earlier
// event, as pi's tree navigation writes it) gives the events of its new
// branch, and the next event continues it.
func TestForkAndBranch(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newTestService(t, dir)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(id string) {
		ev := &session.Event{ID: id, Author: "user"}
		ev.Content = genai.NewContentFromText("prompt "+id, "user")
		if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"e1", "e2", "e3"} {
		add(id)
	}
	if err := s.Release("app", "u", "s1"); err != nil {
		t.Fatal(err)
	}
	path, err := s.find(key{"app", "u", "s1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: filepath.Dir(path), CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.Fork(ctx, path, engine.ForkOptions{At: entryOf(t, path, "e2")})
	if err != nil {
		t.Fatal(err)
	}
	fork := f.SessionID()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"e1", "e2"}, eventIDs(t, s, fork)); diff != "" {
		t.Errorf("fork's events (-want +got):\n%s", diff)
	}
	list, err := s.List(ctx, &session.ListRequest{AppName: "app", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 2 {
		t.Errorf("listed %d sessions after the fork, want 2", len(list.Sessions))
	}

	w, err := st.Open(ctx, path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.BranchWithSummary(engine.BranchSummary{FromID: entryOf(t, path, "e1"), Summary: "went back to e1"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"e1"}, eventIDs(t, s, "s1")); diff != "" {
		t.Errorf("events after branching back (-want +got):\n%s", diff)
	}
	add("e4")
	if diff := cmp.Diff([]string{"e1", "e4"}, eventIDs(t, s, "s1")); diff != "" {
		t.Errorf("events after appending to the new branch (-want +got):\n%s", diff)
	}
}

// TestSessionContinuedInPi: messages pi appended to an adapter's session
// (a user resuming it in pi) are events of their own in Get, in order,
// and ADK's next event follows them.
func TestSessionContinuedInPi(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newTestService(t, dir)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	ev := &session.Event{ID: "e1", Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("hello", "user")}}
	if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
		t.Fatal(err)
	}
	if err := s.Release("app", "u", "s1"); err != nil {
		t.Fatal(err)
	}
	path, err := s.find(key{"app", "u", "s1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := engine.OpenFile(ctx, path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	q, err := w.AppendMessage(message.NewUser("asked in pi", at))
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText("answered in pi")}, message.Usage{}, message.StopStop, at.Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(ctx, c.Session, &session.Event{ID: "e2", Author: "user"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ID, Author, Text string }
	var rows []row
	for ev := range got.Session.Events().All() {
		text := ""
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				text += p.Text
			}
		}
		rows = append(rows, row{ev.ID, ev.Author, text})
	}
	want := []row{{"e1", "user", "hello"}, {"pi-" + q, "user", "asked in pi"}, {"pi-" + a, "pi", "answered in pi"}, {"e2", "user", ""}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
