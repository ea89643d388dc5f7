package render

import (
	"context"
	"errors"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/layout"
)

// PlaceStats adds up the sessions of places for 'sessctl stats --all':
// every session file of their one JSONL place (stats.Dir with o), and
// beside them the AgentUse sessions of their AgentUse places, counted
// (subagents included) but not added up, what cannot be read of those
// going to skip. The report's AgentUse count is set when places hold an
// AgentUse place. It returns the report and stats.Dir's total (whose
// Unread says what the totals may miss); places must hold exactly one
// JSONL place.
func PlaceStats(ctx context.Context, places []layout.Place, o stats.DirOptions, skip func(error)) (*StoreStats, *stats.DirTotal, error) {
	js := layout.Places(places, layout.FormatJSONL)
	if len(js) != 1 {
		return nil, nil, errors.New("render: PlaceStats needs one JSONL place")
	}
	st, err := engine.OpenPlace(ctx, js[0], engine.StoreOptions{})
	if err != nil {
		return nil, nil, err
	}
	var aus *int
	agentUse := layout.Places(places, layout.FormatAgentUse)
	if len(agentUse) > 0 {
		aus = new(int)
	}
	for _, p := range agentUse {
		au, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: p.Root})
		if err != nil {
			return nil, nil, err
		}
		n, err := au.Count(ctx, skip)
		_ = au.Close()
		if err != nil {
			return nil, nil, err
		}
		*aus += n
	}
	total, err := stats.Dir(ctx, st.Dir(), o)
	if err != nil {
		return nil, nil, err
	}
	return &StoreStats{Store: st.Dir(), Sessions: total.Sessions, Skipped: total.Skipped, All: total.All, AgentUse: aus}, total, nil
}
