package compaction_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/workload"
)

// compact is the typical caller of the package documentation, which shows
// its code: TestDocExamples in package engine checks that the two stay the
// same.
func compact(ctx context.Context, session *engine.Session, summarizer compaction.Summarizer) error {
	prep, err := compaction.Prepare(session.BranchPath(""), compaction.DefaultSettings())
	if err != nil {
		return err // ErrAlreadyCompacted, ErrNothingToCompact
	}
	res, err := compaction.Compact(ctx, prep, summarizer, "")
	if err != nil {
		return err // nothing is written
	}
	_, err = session.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details})
	return err
}

func Example() {
	dir, err := os.MkdirTemp("", "compaction-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl")
	if _, err := workload.WriteFile(path, workload.Options{Seed: 1, Entries: 300}); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})
	if err != nil {
		log.Fatal(err)
	}
	s, err := st.Open(ctx, path, engine.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := compact(ctx, s, compaction.Fixed("The user asked for a fix; it was made.")); err != nil {
		log.Fatal(err)
	}
	id, _ := s.LeafID()
	leaf, _ := s.Entry(id)
	fmt.Println(leaf.Type, len(s.Context().Messages) < 300)
	// Output: compaction true
}
