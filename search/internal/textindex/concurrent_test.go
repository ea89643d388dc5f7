package textindex

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestSearchDuringMergeAndCommit runs searches while a merge and a
// commit go on: each search sees one manifest's segments whole (every
// document of a committed batch or none of it), and the replaced
// segment files are removed once no search uses them.
func TestSearchDuringMergeAndCommit(t *testing.T) {
	fsys := vfstest.NewCrashFS()
	ix, m := build(t, fsys, "/idx", 9, 600, MinBudget)
	defer ix.Close()
	base := len(m.docs)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := ix.Search(context.Background(), Query{Clauses: ParseQuery("every")})
				if err != nil {
					errs <- err
					return
				}
				// Either the first build alone or with the whole batch.
				if len(hits) != base && len(hits) != base+200 {
					t.Errorf("a search saw %d documents, want %d or %d", len(hits), base, base+200)
					return
				}
				_ = r
			}
		}()
	}
	r := rand.New(rand.NewPCG(10, 10))
	b := ix.NewBuilder(BuildOptions{Budget: MinBudget})
	for i := range 200 {
		d := randomDoc(r, uint64(10000+i))
		d.Text += " every"
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	var mergeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		mergeErr = ix.Merge(context.Background())
	}()
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Merge(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if mergeErr != nil {
		t.Fatal(mergeErr)
	}
	if st := ix.Stats(); st.Segments != 1 || st.Docs != int64(base+200) {
		t.Fatalf("after the merges: %+v", st)
	}
	ents, _ := fsys.ReadDir("/idx")
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the index directory holds %v, want the manifest and one segment", names)
	}
}
