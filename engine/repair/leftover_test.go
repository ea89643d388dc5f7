package repair_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/internal/sessionfile"
)

// What a writer killed before its first write leaves (issue 42, 4) is
// found, and cleared where no live writer holds it: a held lock, and the
// files of a session that exists, stay.
func TestLeftovers(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "--home-dev-p--")
	if err := os.MkdirAll(filepath.Join(dir, ".trash"), 0o700); err != nil {
		t.Fatal(err)
	}
	put := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A killed writer's session that never came to be.
	dead := []string{put("a.jsonl.lock"), put("a.jsonl.owner"), put("a.jsonl.owner.tmp-0123456789abcdef"), put("a.jsonl.tmp-0123456789abcdef")}
	// A live writer's, before its first write.
	lk, err := sessionfile.Acquire(ctx, filepath.Join(dir, "b.jsonl"), sessionfile.LockOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	// A session that exists, with its lock; and what lies in the trash.
	put("c.jsonl")
	keep := []string{put("c.jsonl.lock"), filepath.Join(dir, "b.jsonl.lock"), filepath.Join(dir, "b.jsonl.owner")}
	trashed := filepath.Join(dir, ".trash", "d.jsonl.lock")
	if err := os.WriteFile(trashed, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	found, err := repair.Leftovers(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	var free, held []string
	for _, l := range found {
		if l.Held {
			held = append(held, l.Path)
		} else {
			free = append(free, l.Path)
		}
	}
	slices.Sort(dead)
	if !slices.Equal(free, dead) || !slices.Equal(held, keep[1:]) {
		t.Fatalf("leftovers: free %v, held %v; want free %v, held %v", free, held, dead, keep[1:])
	}
	removed, stillHeld, err := repair.ClearLeftovers(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, dead) || len(stillHeld) != 2 {
		t.Errorf("cleared %v (held %v), want %v", removed, stillHeld, dead)
	}
	for _, p := range dead {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
	for _, p := range append(keep, trashed) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
