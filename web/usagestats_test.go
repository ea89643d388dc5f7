package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestUsageCountsAsStats: the viewer's cost column and stats page count
// a session as engine/stats does, pi 1.x's usage entries and the
// requests of compactions, branch summaries and tools included (the
// viewer counted assistant messages only), per model and in total.
func TestUsageCountsAsStats(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"u1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":1,"output":1,"cost":{"total":0.01}}}}`,
		`{"type":"usage","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","kind":"title","provider":"p","model":"small","usage":{"input":5,"output":5,"cost":{"total":0.1}}}`,
		`{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","summary":"S","firstKeptEntryId":"d","tokensBefore":1,"usage":{"input":100,"output":10,"cost":{"total":1}}}`,
		`{"type":"branch_summary","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","fromId":"d","summary":"B","usage":{"input":20,"output":2}}`,
		`{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"1","toolName":"code","content":[],"usage":{"input":3,"output":3}}}`,
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var entries []*jsonl.Entry
	for _, l := range lines[1:] {
		e, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, &e)
	}
	want := stats.Count(entries)

	u, err := readUsage(vfs.OS(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u.total.TotalTokens != want.Usage.TotalTokens || human.Cost(u.total.Cost.Total) != human.Cost(want.Usage.Cost.Total) {
		t.Errorf("total %d tokens, %s; stats counts %d, %s", u.total.TotalTokens, human.Cost(u.total.Cost.Total),
			want.Usage.TotalTokens, human.Cost(want.Usage.Cost.Total))
	}
	got := map[string]int64{}
	msgs := map[string]int{}
	for dm, t := range u.by {
		got[dm.model] += t.usage.TotalTokens
		msgs[dm.model] += t.messages
	}
	for _, m := range want.Models {
		if got[m.Model] != m.Usage.TotalTokens || msgs[m.Model] != m.Messages {
			t.Errorf("%s: %d tokens, %d messages; stats counts %d, %d", m.Model, got[m.Model], msgs[m.Model], m.Usage.TotalTokens, m.Messages)
		}
	}
	if len(got) != len(want.Models) || u.msgs != 1 {
		t.Errorf("models %v, %d messages; stats counts %d models, 1 message", got, u.msgs, len(want.Models))
	}
}
