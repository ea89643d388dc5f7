package main

import (
	"context"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
)

// Short ids are shown as git shows object names: the shortest prefix, of
// eight characters or more, that no other session of the store shares,
// so that each is a SESSION the commands resolve.

// searchShortIDs returns the ids of the JSONL sessions of the stores a
// search looks in, to shorten its hits' ids among.
func searchShortIDs(ctx context.Context, stores []layout.Place) *shortid.Set {
	ids := &shortid.Set{}
	for _, s := range stores {
		if s.Format != layout.FormatJSONL {
			continue
		}
		st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: s.Root})
		if err != nil {
			continue
		}
		infos, _ := st.List(ctx, "", engine.ListOptions{NoText: true})
		for i := range infos {
			ids.Add(infos[i].Path, infos[i].ID)
		}
	}
	return ids
}
