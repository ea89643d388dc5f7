package search

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// cancelAt is a context that reports itself canceled from its n-th Err
// call on.
type cancelAt struct {
	context.Context
	calls, n atomic.Int64
}

func (c *cancelAt) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestNoIndexScanError: a search without an index that is cut short
// while it reads the files reports why, instead of ending as if it had
// found nothing.
func TestNoIndexScanError(t *testing.T) {
	root, _, _ := fixtureStore(t)
	x := openIndex(t, Options{NoIndex: true})
	q := Query{Stores: dirPlaces(root), Text: "flaky"}
	// How many times a whole search asks: the last asks are the scan's.
	probe := &cancelAt{Context: context.Background()}
	probe.n.Store(1 << 40)
	for _, err := range x.Search(probe, q) {
		if err != nil {
			t.Fatal(err)
		}
	}
	total := probe.calls.Load()
	if total == 0 {
		t.Fatal("the search never looked at its context")
	}
	ctx := &cancelAt{Context: context.Background()}
	ctx.n.Store(total)
	var got error
	hits := 0
	for _, err := range x.Search(ctx, q) {
		if err != nil {
			got = err
			break
		}
		hits++
	}
	if !errors.Is(got, context.Canceled) {
		t.Errorf("a search canceled at its last look (%d) gave %d hits and %v, want context.Canceled", total, hits, got)
	}
}
