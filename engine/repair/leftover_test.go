package repair_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	old := time.Now().Add(-2 * time.Minute)
	put := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
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
	// A temporary file written a moment ago, beside no lock: the output
	// of a command that takes none (export -o), still being written.
	young := filepath.Join(dir, "e.jsonl.tmp-fedcba9876543210")
	if err := os.WriteFile(young, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, young)
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
	wantHeld := slices.Sorted(slices.Values(keep[1:]))
	if !slices.Equal(free, dead) || !slices.Equal(held, wantHeld) {
		t.Fatalf("leftovers: free %v, held %v; want free %v, held %v", free, held, dead, wantHeld)
	}
	removed, stillHeld, err := repair.ClearLeftovers(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, dead) || len(stillHeld) != 3 {
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
