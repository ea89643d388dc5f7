package stats_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/stats"
)

// TestCountView checks that CountView counts a session's entries and
// those of its active branch apart: an abandoned branch is in the one,
// not the other.
func TestCountView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n" +
		`{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}` + "\n" +
		`{"type":"message","id":"c1","parentId":"a1","timestamp":"2026-03-01T09:00:03.000Z","message":{"role":"user","content":"again","timestamp":3}}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := engine.OpenStore(context.Background(), engine.StoreOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.View(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	all, branch, err := stats.CountView(v, v.Entries(), v.BranchPath(""))
	if err != nil {
		t.Fatal(err)
	}
	if all.Messages != 3 || branch.Messages != 2 || all.Roles["assistant"] != 1 || branch.Roles["assistant"] != 0 {
		t.Errorf("all %d messages %v, branch %d messages %v; want 3 (1 assistant) and 2 (none)", all.Messages, all.Roles, branch.Messages, branch.Roles)
	}
	if all.Usage.TotalTokens != 15 || branch.Usage.TotalTokens != 0 {
		t.Errorf("tokens: all %d, branch %d; want 15 and 0", all.Usage.TotalTokens, branch.Usage.TotalTokens)
	}
}
