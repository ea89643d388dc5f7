package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
)

// PlaceListing is what 'sessctl list' shows: every session of a set of
// places, of both formats (ListPlaces), or the sessions of one store
// (ListStore).
type PlaceListing struct {
	// JSONL is the JSONL sessions of every JSONL place, newest first.
	JSONL []engine.Info
	// AgentUse is the top-level AgentUse sessions of every AgentUse
	// place, each place's in AgentUse's order (agentuse.Store.List).
	AgentUse []*agentuse.Info

	stores []placeStore // each JSONL place's store and listing, in order

	// For ListStore: the store, the cwd listed ("" for every cwd), the
	// table grouped by cwd (ListAll), and whether the store's listing
	// of every cwd (for short ids) may use the list index.
	one     *engine.Store
	cwd     string
	byCwd   bool
	noIndex bool
	// rows: JSONL holds rows read with their texts (Rows), not a listing
	// of stores.
	rows bool
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

// ListStore lists the sessions of st in cwd ("" for every cwd) with o's
// options (engine.Store.List), for WriteText to show as 'sessctl list'
// does: in List's table with ids no session of st shares, or with byCwd
// in ListAll's, grouped by cwd.
func ListStore(ctx context.Context, st *engine.Store, cwd string, o engine.ListOptions, byCwd bool) (*PlaceListing, error) {
	infos, err := st.List(ctx, cwd, o)
	if err != nil {
		return nil, err
	}
	return &PlaceListing{JSONL: infos, stores: []placeStore{{st, infos}}, one: st, cwd: cwd, byCwd: byCwd, noIndex: o.NoIndex}, nil
}

// Rows returns a listing of rows already read with their texts, newest
// first (a remote's, replica.PiInfos), to write as ListStore's are.
func Rows(infos []engine.Info) *PlaceListing { return &PlaceListing{JSONL: infos, rows: true} }

// Empty reports whether the places hold no session.
func (l *PlaceListing) Empty() bool { return len(l.JSONL) == 0 && len(l.AgentUse) == 0 }

// WriteText writes the listing as 'sessctl list' does: the JSONL
// sessions in List's table, or ListAll's for ListStore's byCwd, then,
// after an empty line, the AgentUse sessions in AgentUseList's. The ids
// are shortened among all the sessions listed, and for a ListStore of
// one cwd among every session of its store (listed again, without
// texts, under ctx; the listed ones alone when that fails). It writes
// nothing for an empty listing; it returns the first write error.
func (l *PlaceListing) WriteText(ctx context.Context, w io.Writer) error {
	ew := &errWriter{w: w}
	ids := l.JSONL
	if l.one != nil && l.cwd != "" && len(l.JSONL) > 0 {
		if all, err := l.one.List(ctx, "", engine.ListOptions{NoText: true, NoIndex: l.noIndex}); err == nil {
			ids = all
		}
	}
	if l.byCwd {
		_ = ListAll(ew, l.JSONL, ids) // an error stays in ew
	} else {
		_ = ListIn(ew, l.JSONL, ids)
	}
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
// Rows yields its rows as they are.
func (l *PlaceListing) Texts(ctx context.Context, o engine.ListOptions) iter.Seq2[*engine.Info, error] {
	return func(yield func(*engine.Info, error) bool) {
		for i := range l.JSONL {
			if l.rows && !yield(&l.JSONL[i], nil) {
				return
			}
		}
		for _, s := range l.stores {
			for in, err := range s.st.ListTexts(ctx, s.infos, o) {
				if !yield(in, err) {
					return
				}
			}
		}
	}
}

// WriteJSON writes the listing as the one JSON array of 'sessctl list
// --json' (ListPlacesJSONSeq: the JSONL sessions with their texts, read
// one at a time, then the AgentUse sessions), handing write a part at a
// time. A JSONL file that can no longer be read goes to o.Warn and is
// left out; ctx ending stops the listing with ctx's error, as does
// write's first error.
func (l *PlaceListing) WriteJSON(ctx context.Context, o engine.ListOptions, write func([][]byte) error) error {
	var stop error // ctx done: not a file to leave out
	skip := func(err error) {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			stop = err
		} else if o.Warn != nil {
			o.Warn(err)
		}
	}
	for part := range ListPlacesJSONSeq(l.Texts(ctx, o), l.AgentUse, skip) {
		if stop != nil {
			break
		}
		if err := write(part); err != nil {
			return err
		}
	}
	return stop
}
