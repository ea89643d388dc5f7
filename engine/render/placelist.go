package render

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
)

// PlaceListing is every session of a set of places, of both formats:
// what 'sessctl list --store DIR' (or --store all) shows.
type PlaceListing struct {
	// JSONL is the JSONL sessions of every JSONL place, newest first.
	JSONL []engine.Info
	// AgentUse is the top-level AgentUse sessions of every AgentUse
	// place, each place's in AgentUse's order (agentuse.Store.List).
	AgentUse []*agentuse.Info

	stores []placeStore // each JSONL place's store and listing, in order
}

type placeStore struct {
	st    *engine.Store
	infos []engine.Info
}

// ListPlaces lists every session of places (layout.ResolvePlaces): each
// JSONL place's with engine.Store.List (every cwd, with o's options),
// each AgentUse place's top-level sessions with agentuse.Store.List
// (what cannot be read going to o.Warn). It fails at the first place
// that cannot be listed.
func ListPlaces(ctx context.Context, places []layout.Place, o engine.ListOptions) (*PlaceListing, error) {
	l := &PlaceListing{}
	for _, p := range places {
		switch p.Format {
		case layout.FormatJSONL:
			st, err := engine.OpenPlace(ctx, p, engine.StoreOptions{})
			if err != nil {
				return nil, err
			}
			infos, err := st.List(ctx, "", o)
			if err != nil {
				return nil, err
			}
			l.stores = append(l.stores, placeStore{st, infos})
			l.JSONL = append(l.JSONL, infos...)
		case layout.FormatAgentUse:
			st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: p.Root})
			if err != nil {
				return nil, err
			}
			list, err := st.List(ctx, agentuse.ListOptions{Warn: o.Warn})
			_ = st.Close()
			if err != nil {
				return nil, err
			}
			l.AgentUse = append(l.AgentUse, list...)
		}
	}
	slices.SortStableFunc(l.JSONL, func(a, b engine.Info) int { return b.Modified.Compare(a.Modified) })
	return l, nil
}

// Empty reports whether the places hold no session.
func (l *PlaceListing) Empty() bool { return len(l.JSONL) == 0 && len(l.AgentUse) == 0 }

// WriteText writes the listing as 'sessctl list' does: the JSONL
// sessions in List's table (ids shortened among all of them), then,
// after an empty line, the AgentUse sessions in AgentUseList's. It
// writes nothing for an empty listing; it returns the first write error.
func (l *PlaceListing) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	_ = ListIn(ew, l.JSONL, l.JSONL) // an error stays in ew
	if len(l.AgentUse) > 0 {
		if len(l.JSONL) > 0 {
			fmt.Fprintln(ew)
		}
		AgentUseList(ew, l.AgentUse)
	}
	return ew.err
}

// Texts yields the JSONL sessions with their texts (engine.Store.ListTexts,
// read one at a time), each place's in its store's listing order, for
// ListPlacesJSONSeq: a file that can no longer be read yields its error.
func (l *PlaceListing) Texts(ctx context.Context, o engine.ListOptions) iter.Seq2[*engine.Info, error] {
	return func(yield func(*engine.Info, error) bool) {
		for _, s := range l.stores {
			for in, err := range s.st.ListTexts(ctx, s.infos, o) {
				if !yield(in, err) {
					return
				}
			}
		}
	}
}
