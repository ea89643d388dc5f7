package textindex

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestFullDiskDuringBuild fills the disk while segments are written out
// (on the Builder's other goroutine) and while the manifest is written:
// the error comes back from Add or Commit, the index keeps what it had,
// and Abort removes the new segment files; after the disk has room the
// same documents build.
func TestFullDiskDuringBuild(t *testing.T) {
	for _, what := range []string{"segment", "manifest"} {
		t.Run(what, func(t *testing.T) {
			ffs := vfstest.NewFaultFS(vfstest.NewCrashFS())
			ix, m := build(t, ffs, "/idx", 11, 120, MinBudget)
			defer ix.Close()
			before, _ := everyID(ffs)
			files := func() []string {
				ents, _ := ffs.ReadDir("/idx")
				var out []string
				for _, e := range ents {
					out = append(out, e.Name())
				}
				return out
			}
			had := files()
			match := func(p string) bool { return strings.HasSuffix(p, ".seg") || strings.Contains(p, ".seg"+vfs.TempSuffix) }
			if what == "manifest" {
				match = func(p string) bool { return strings.Contains(p, ManifestName) }
			}
			n := 2 // the second write of the segments: the Builder is under way
			if what == "manifest" {
				n = 1 // written with one write
			}
			ffs.Inject(vfstest.Fault{Op: vfstest.OpWrite, N: n, Err: syscall.ENOSPC, Repeat: true, Written: -1, Match: match})
			r := rand.New(rand.NewPCG(12, 12))
			b := ix.NewBuilder(BuildOptions{Budget: MinBudget})
			var docs []Doc
			var err error
			for i := range 400 {
				d := randomDoc(r, uint64(5000+i))
				d.Text += " every"
				docs = append(docs, d)
				if err = b.Add(d); err != nil {
					break
				}
			}
			if err == nil {
				err = b.Commit()
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("build on a full disk: %v, want ENOSPC", err)
			}
			if err := b.Add(Doc{ID: 99999, Text: "x"}); !errors.Is(err, syscall.ENOSPC) && what == "segment" {
				t.Fatalf("a failed Builder took another document: %v", err)
			}
			if err := b.Abort(); err != nil {
				t.Fatal(err)
			}
			ffs.Clear()
			if got, err := everyID(ffs); err != nil || !slices.Equal(got, before) {
				t.Fatalf("after the failure the index holds %d documents (%v), want %d", len(got), err, len(before))
			}
			if err := ix.RemoveLeftovers(); err != nil {
				t.Fatal(err)
			}
			if got := files(); !slices.Equal(got, had) {
				t.Fatalf("files %v, want %v", got, had)
			}
			b = ix.NewBuilder(BuildOptions{Budget: MinBudget})
			for _, d := range docs {
				if err := b.Add(d); err != nil {
					t.Fatal(err)
				}
				m.add(d)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			if got, err := everyID(ffs); err != nil || !slices.Equal(got, m.ids()) {
				t.Fatalf("the rebuild holds %d documents (%v), want %d", len(got), err, len(m.ids()))
			}
			checkQueries(t, ix, m, r, 50)
		})
	}
}
