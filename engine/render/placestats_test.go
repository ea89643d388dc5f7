package render

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/layout"
)

// TestPlaceStats adds up a directory of both formats: the JSONL sessions
// counted in the totals, the AgentUse ones (a subagent included) counted
// beside them; a JSONL place alone leaves the AgentUse count out.
func TestPlaceStats(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSession(t, filepath.Join(root, "a"), "one", time.Now())
	writeSession(t, filepath.Join(root, "b"), "two", time.Now())
	au, err := agentuse.OpenStore(t.Context(), agentuse.StoreOptions{Dir: filepath.Join(root, "au"), Sync: agentuse.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	spec := agentuse.SessionSpec{Agent: agentuse.Agent{ID: "agents/x", Name: "x"}, Model: "p:m"}
	w, err := au.Create(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := w.CreateSubagent(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	_ = sub.Close()
	_ = w.Close()
	o := stats.DirOptions{NoIndex: true, Skip: func(p string, err error) { t.Errorf("skipped %s: %v", p, err) }}
	skip := func(err error) { t.Errorf("skipped %v", err) }
	both, err := layout.ResolvePlacesFrom(root, func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, total, err := PlaceStats(t.Context(), both, o, skip)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Store != root || rep.Sessions != 2 || total.Sessions != 2 || rep.AgentUse == nil || *rep.AgentUse != 2 || rep.All == nil || rep.All.Messages != 4 {
		t.Errorf("both formats: %+v (AgentUse %v)", rep, rep.AgentUse)
	}
	rep, _, err = PlaceStats(t.Context(), layout.Places(both, layout.FormatJSONL), o, skip)
	if err != nil || rep.Sessions != 2 || rep.AgentUse != nil {
		t.Errorf("JSONL alone: %+v, %v", rep, err)
	}
	if _, _, err := PlaceStats(t.Context(), layout.Places(both, layout.FormatAgentUse), o, skip); err == nil {
		t.Error("no JSONL place: no error")
	}
}
