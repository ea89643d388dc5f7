package replica_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/replica"
)

// TestRemoteSessionInfo checks a remote session's listing row: its
// name as path, the texts and times of its summary, and the fallbacks
// when the summary has no last message or no creation time.
func TestRemoteSessionInfo(t *testing.T) {
	pub := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s := replica.RemoteSession{Kind: replica.KindPi, Name: "--w--/s.jsonl", Size: 42, Time: pub, Summary: replica.Summary{
		ID: "s1", Cwd: "/w", Name: "n", FirstMessage: "hi", Messages: 2,
		Created: "2026-03-01T09:00:00.000Z", LastMessage: "2026-03-02T10:00:00.000Z"}}
	in := s.Info()
	if in.Path != "--w--/s.jsonl" || in.ID != "s1" || !in.HasName || in.Name != "n" || in.MessageCount != 2 || in.Size != 42 ||
		!in.CreatedValid || !in.Modified.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("Info = %+v", in)
	}
	s.Summary.LastMessage = ""
	if in := s.Info(); !in.Modified.Equal(in.Created) {
		t.Errorf("no last message: modified %v, want created %v", in.Modified, in.Created)
	}
	s.Summary = replica.Summary{}
	if in := s.Info(); !in.Modified.Equal(pub) || in.FirstMessage != "(no messages)" || in.HasName || in.CreatedValid {
		t.Errorf("empty summary: %+v", in)
	}
}

// TestPiInfos checks list --remote's rows: the pi sessions newest first
// (ties in their order), AgentUse ones left out, and the sessions that
// could not be read, of either kind, apart.
func TestPiInfos(t *testing.T) {
	day := func(d int) replica.Summary {
		return replica.Summary{ID: string(rune('a' + d)), LastMessage: time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)}
	}
	bad := errors.New("bad manifest")
	ss := []replica.RemoteSession{
		{Kind: replica.KindPi, Name: "old", Summary: day(1)},
		{Kind: replica.KindAgentUse, Name: "au"},
		{Kind: replica.KindPi, Name: "new", Summary: day(3)},
		{Kind: replica.KindAgentUse, Name: "au-bad", Err: bad},
		{Kind: replica.KindPi, Name: "mid", Summary: day(2)},
		{Kind: replica.KindPi, Name: "pi-bad", Err: bad},
	}
	infos, failed := replica.PiInfos(ss)
	var names []string
	for _, in := range infos {
		names = append(names, in.Path)
	}
	if got := strings.Join(names, " "); got != "new mid old" {
		t.Errorf("rows %q, want new mid old", got)
	}
	if len(failed) != 2 || failed[0].Name != "au-bad" || failed[1].Name != "pi-bad" {
		t.Errorf("failed: %+v", failed)
	}
}
