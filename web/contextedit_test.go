package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestSessionPageShowsContextEdits: pi 1.x's usage entries and context
// edits are notes of the transcript, and a message a context edit omits
// or replaces is still shown, saying so.
func TestSessionPageShowsContextEdits(t *testing.T) {
	s := newServer(t, Options{})
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: s.root, Sync: engine.SyncNone, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	es, err := st.Create(ctx, "/w/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1772355600000)
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Total: 0.25})
	must := func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	u := must(es.AppendMessage(message.NewUser("run the build and paste the whole log", at)))
	a := must(es.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText("HUGE LOG HERE")}, usage, message.StopStop, at)))
	must(es.AppendUsage("title", "anthropic", "claude-haiku", usage, ""))
	omit := must(es.AppendContextEdit(u, nil))
	repl := must(es.AppendContextEdit(a, "[log removed]"))
	file := es.SessionFile()
	if err := es.Close(); err != nil {
		t.Fatal(err)
	}
	s.h.list.invalidate()
	body := s.mustGet(s.page(file))
	for _, want := range []string{
		"run the build and paste the whole log", "HUGE LOG HERE", // the history, unchanged
		"omitted from the model context by " + omit,
		"replaced in the model context by " + repl,
		"context edit", "[log removed]",
		"usage · title", "anthropic/claude-haiku",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestSearchPageFindsContextEdits: the search page finds a context
// edit's replacement as a "context edit" hit, and keeps system messages
// with role system.
func TestSearchPageFindsContextEdits(t *testing.T) {
	s := newServer(t, Options{})
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: s.root, Sync: engine.SyncNone, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	es, err := st.Create(ctx, "/w/app", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1772355600000)
	usage := message.NewUsage(1000, 200, 0, 0, message.Cost{Total: 0.25})
	for _, m := range []message.Message{
		message.NewSystem("answer like a quokka", at),
		message.NewUser("paste the quokka log", at),
	} {
		if _, err := es.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	a, err := es.AppendMessage(message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText("HUGE LOG")}, usage, message.StopStop, at))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := es.AppendContextEdit(a, "[quokka log removed]"); err != nil {
		t.Fatal(err)
	}
	if err := es.Close(); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{
		"q=quokka":             {`<span class="kind">system</span>`, `<span class="kind">user</span>`, `<span class="kind">context edit</span>`},
		"q=quokka&role=system": {`<span class="kind">system</span>`},
		"q=quokka&role=other":  {`<span class="kind">context edit</span>`},
	} {
		body := s.mustGet("/search?" + q)
		if got := strings.Count(body, `<li class="hit">`); got != len(want) {
			t.Errorf("?%s: %d hits, want %d:\n%s", q, got, len(want), body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("?%s lacks %s", q, w)
			}
		}
	}
}
