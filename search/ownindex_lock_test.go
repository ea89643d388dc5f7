package search

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestOwnSearchSharesLock: while another holder has the index lock
// shared (another process's search), a search that finds the own index
// current answers (it needs the lock only shared), and one that must
// update it waits for the lock exclusive, then finds the new line.
func TestOwnSearchSharesLock(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{Engine: EngineOwn})
	want := searchAll(t, x, Query{Text: "flaky", Stores: stores})
	if len(want) == 0 {
		t.Fatal("no hits for flaky")
	}
	// Out of the window in which a file is read again whatever its stat.
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{s1, s2} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	searchAll(t, x, Query{Text: "flaky", Stores: stores}) // records the times
	other, err := lockShared(context.Background(), vfs.OS(), x.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	got, err := collectCtx(ctx, x, Query{Text: "flaky", Stores: stores})
	cancel()
	if err != nil {
		t.Fatalf("search of a current index beside a shared holder: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("%d hits beside a shared holder, want %d", len(got), len(want))
	}
	appendLines(t, s1, userLine("zz1", "", "2026-03-01T10:00:00.000Z", "flaky zebra"))
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = collectCtx(ctx, x, Query{Text: "zebra", Stores: stores})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an update beside a shared holder: %v, want it to wait for the lock", err)
	}
	if err := other.release(); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, Query{Text: "zebra", Stores: stores}); len(got) != 1 {
		t.Errorf("after the holder left: %v, want the appended line", got)
	}
}

func collectCtx(ctx context.Context, x *Index, q Query) ([]Hit, error) {
	var hits []Hit
	for h, err := range x.Search(ctx, q) {
		if err != nil {
			return hits, err
		}
		hits = append(hits, h)
	}
	return hits, nil
}
