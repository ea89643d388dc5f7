package engine

import (
	"context"
	"path/filepath"

	"github.com/sessctl/sessctl/layout"
)

// OpenPlace opens the store of a JSONL place (layout.ResolvePlaces): an
// agent's store (one directory per cwd) for pi's and indusagi's places,
// a store on the directory for any other. o gives the store's other
// options; its Agent, AgentDir and Dir are set from the place.
func OpenPlace(ctx context.Context, p layout.Place, o StoreOptions) (*Store, error) {
	switch p.Name {
	case layout.PlacePi:
		o.Agent, o.AgentDir = layout.AgentPi, filepath.Dir(p.Root)
	case layout.PlaceIndusagi:
		o.Agent, o.AgentDir = layout.AgentIndusagi, filepath.Dir(p.Root)
	default:
		o.Dir = p.Root
	}
	return OpenStore(ctx, o)
}
