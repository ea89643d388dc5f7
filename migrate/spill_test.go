package migrate_test

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/migrate"
)

// buildAll builds a session with every kind of entry, a fork, a
// compaction, a message completed after its children and an active point
// with later entries on another branch.
func buildAll(dir string) *migrate.Imported {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	user := func(s string) []byte { return migrate.UserMessage(migrate.TextContent(s), t0.UnixMilli()) }
	b := migrate.NewBuilder("test", "spill")
	b.SetTempDir(dir)
	b.SetName("spilled")
	a := b.Message("a", nil, t0, user("a"))
	open := b.Message("asst", a, t0, nil)
	b.Message("b1", open, t0, user("b1"))
	c := b.Compaction("c", open, t0, "summary", 42, []byte(`{"x":1}`))
	k := b.Message("k", c, t0, user("kept"))
	b.ModelChange("m", k, t0, "p", "m1")
	b.ThinkingLevel("l", b.Last(), t0, "high")
	b.CustomMessage("cm", b.Last(), t0, "ct", jsonl.AppendString(nil, "note"), true, nil)
	b.Custom("cu", b.Last(), t0, "x", nil)
	b.Custom("cu", b.Last(), t0, "y", []byte(`{"d":[1,2]}`))
	open.SetMessage((&migrate.Assistant{API: "x", Provider: "p", Model: "m", Content: [][]byte{migrate.TextBlock("answer")}}).JSON())
	b.Message("later", k, t0, user("later, on another branch"))
	b.SetLeaf(k)
	return b.Finish(migrate.Meta{SourcePath: "/src", SourceVersion: "1", Start: t0, Cwd: "/w", CwdKnown: true})
}

// TestBuilderSpill: a session whose content outgrows the builder's memory
// bound is kept in a temporary file, and gives the same bytes, entries
// and messages as one built in memory; the temporary file leaves nothing
// in its directory.
func TestBuilderSpill(t *testing.T) {
	dir := t.TempDir()
	mem := buildAll(dir)
	if mem.Lines == nil {
		t.Fatal("a small session was not kept in memory")
	}
	restore := migrate.SpillAt(0)
	defer restore()
	sp := buildAll(dir)
	defer sp.Close()
	if sp.Lines != nil {
		t.Fatal("the session was not spilled")
	}
	if got, want := string(sp.Bytes("/parent.jsonl")), string(mem.Bytes("/parent.jsonl")); got != want {
		t.Errorf("spilled session:\n%s\nwant\n%s", got, want)
	}
	if sp.Entries() != mem.Entries() || sp.Messages != mem.Messages {
		t.Errorf("%d entries, %d messages; want %d, %d", sp.Entries(), sp.Messages, mem.Entries(), mem.Messages)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left in the temporary directory: %v", len(ents), ents)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sp.Write(io.Discard, ""); err == nil {
		t.Error("a closed session was written")
	}
}
