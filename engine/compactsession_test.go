package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
)

// Session.Compact refuses where pi prepares nothing, writing nothing
// (issue 42, 3: Prepare and Compact on a small session sent the
// summariser no messages and the entry was written), and otherwise
// appends the entry Prepare, Compact and AppendCompaction make.
func TestSessionCompact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	settings := compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 100}
	mk := func(pairs int) *engine.Session {
		clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		seq := 0
		st := openStore(t, engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone,
			Now:          func() time.Time { clock = clock.Add(time.Second); return clock },
			NewSessionID: func() string { return "01a23400-0000-7000-8000-000000000001" },
			NewEntryID:   func() string { seq++; return strings.Repeat("0", 7-len(itoa(seq))) + "c" + itoa(seq) }})
		s, err := st.Create(ctx, "/p", engine.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		for i := range pairs {
			words := strings.Repeat("the build fails again ", 40)
			s.AppendMessage(raw(`{"role":"user","content":"question ` + itoa(i) + ` ` + words + `","timestamp":1}`))
			s.AppendMessage(raw(`{"role":"assistant","content":[{"type":"text","text":"answer ` + words + `"}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
		}
		return s
	}
	small := mk(3) // well within the 20,000 tokens pi keeps
	before, _ := os.ReadFile(small.SessionFile())
	if _, err := small.Compact(ctx, compaction.Fixed("summary"), compaction.DefaultSettings()); !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Errorf("Compact of a small session: %v, want ErrNothingToCompact", err)
	}
	if after, _ := os.ReadFile(small.SessionFile()); string(after) != string(before) {
		t.Error("a refused Compact wrote to the file")
	}

	// The same session twice: one through Compact, one by hand.
	a, b := mk(8), mk(8)
	id, err := a.Compact(ctx, compaction.Fixed("what happened"), settings)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := compaction.Prepare(b.BranchPath(""), settings)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compaction.Compact(ctx, prep, compaction.Fixed("what happened"), "")
	if err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := b.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details, FromHook: &no}); err != nil {
		t.Fatal(err)
	}
	e, ok := a.Entry(id)
	if !ok || e.Type != "compaction" {
		t.Fatalf("Compact returned %q, not a compaction entry", id)
	}
	want, _ := b.Entry(id)
	if want == nil || string(e.Raw) != string(want.Raw) {
		t.Errorf("Compact wrote\n%s\nwant\n%s", e.Raw, want.Raw)
	}
	if _, err := a.Compact(ctx, compaction.Fixed("again"), settings); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("Compact right after a compaction: %v, want ErrAlreadyCompacted", err)
	}
}

// TestPrepareCompaction: a session of one message is ErrNoMessages (pi's
// "no messages yet"), a longer one is prepared as compaction.Prepare
// prepares its branch, and right after a compaction it is
// ErrAlreadyCompacted; none of it writes.
func TestPrepareCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	settings := compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 200}
	st := openStore(t, engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone})
	s, err := st.Create(ctx, "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Repeat("word ", 400)
	add := func(role string) {
		t.Helper()
		if _, err := s.AppendMessage(raw(`{"role":"` + role + `","content":[{"type":"text","text":"` + words + `"}],"timestamp":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	add("user")
	if _, err := s.PrepareCompaction(settings); !errors.Is(err, compaction.ErrNoMessages) {
		t.Errorf("one message: %v, want ErrNoMessages", err)
	}
	for i := range 5 {
		add([]string{"assistant", "user"}[i%2])
	}
	prep, err := s.PrepareCompaction(settings)
	if err != nil {
		t.Fatal(err)
	}
	want, err := compaction.Prepare(s.BranchPath(""), settings)
	if err != nil || prep.FirstKeptEntryID != want.FirstKeptEntryID || prep.FirstKeptIndex != want.FirstKeptIndex {
		t.Errorf("kept from %s (index %d), compaction.Prepare keeps from %s (%d), %v",
			prep.FirstKeptEntryID, prep.FirstKeptIndex, want.FirstKeptEntryID, want.FirstKeptIndex, err)
	}
	res := compaction.FinishSummary(prep, "the summary")
	if _, err := s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID, TokensBefore: res.TokensBefore}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareCompaction(settings); !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("right after a compaction: %v, want ErrAlreadyCompacted", err)
	}
}

// TestAppendCompactionResult appends a caller's summary as pi's agent
// appends its own compaction: the result's summary, first kept entry and
// token count, and fromHook false.
func TestAppendCompactionResult(t *testing.T) {
	t.Parallel()
	st := openStore(t, engine.StoreOptions{Dir: t.TempDir(), Sync: engine.SyncNone})
	s, err := st.Create(context.Background(), "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	words := strings.Repeat("word ", 400)
	for _, role := range []string{"user", "assistant", "user", "assistant"} {
		if _, err := s.AppendMessage(raw(`{"role":"` + role + `","content":[{"type":"text","text":"` + words + `"}],"timestamp":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	prep, err := s.PrepareCompaction(compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	res := compaction.FinishSummary(prep, "the caller's summary")
	id, err := s.AppendCompactionResult(res)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := s.Entry(id)
	raw := ""
	if ok {
		raw = string(e.Raw)
	}
	for _, want := range []string{`"type":"compaction"`, `"fromHook":false`, `"firstKeptEntryId":"` + res.FirstKeptEntryID + `"`, "the caller's summary"} {
		if !strings.Contains(raw, want) {
			t.Errorf("entry %s lacks %s", raw, want)
		}
	}
}
