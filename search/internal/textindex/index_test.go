package textindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// model is the naive scan the index is checked against.
type model struct {
	docs  []Doc
	terms [][]string
}

func (m *model) add(d Doc) {
	m.docs = append(m.docs, d)
	m.terms = append(m.terms, Terms(d.Text))
}

func (m *model) search(q Query) []Hit {
	var hits []Hit
	for i := len(m.docs) - 1; i >= 0; i-- {
		d, terms := m.docs[i], m.terms[i]
		total := 0
		for _, c := range q.Clauses {
			n := countClause(terms, c)
			if n == 0 {
				total = -1
				break
			}
			total += n
		}
		if total < 0 {
			continue
		}
		h := Hit{Meta: Meta{ID: d.ID, Ref: d.Ref, Time: d.Time, Role: d.Role, Tool: d.Tool, Tokens: uint32(len(terms))}, Freq: total}
		if q.Rank == nil && q.Stop != nil && q.Stop(h.Meta) {
			break
		}
		if q.Filter != nil && !q.Filter(h.Meta) {
			continue
		}
		hits = append(hits, h)
	}
	if q.Rank != nil {
		slices.SortStableFunc(hits, func(a, b Hit) int {
			sa, sb := q.Rank(a), q.Rank(b)
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
	}
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits
}

// countClause counts a clause's occurrences: of a term, its
// occurrences; of a phrase, its start positions; of a prefix, the
// occurrences of every term it covers.
func countClause(terms []string, c Clause) int {
	n := 0
	for p := 0; p+len(c.Terms) <= len(terms); p++ {
		ok := true
		for k, t := range c.Terms {
			if c.Prefix && k == len(c.Terms)-1 {
				ok = ok && strings.HasPrefix(terms[p+k], t)
			} else {
				ok = ok && terms[p+k] == t
			}
		}
		if ok {
			n++
		}
	}
	return n
}

var vocab = strings.Fields(`alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho
sigma tau upsilon phi chi psi omega alp alpine bet better bets gam gamut café naïve Łódź x y z`)

func randomText(r *rand.Rand) string {
	var b strings.Builder
	n := r.IntN(40)
	if r.IntN(50) == 0 {
		n = 3000 // a long document: several positions blocks
	}
	for i := range n {
		if i > 0 {
			b.WriteString([]string{" ", ", ", ".\n", "-", " (", "\t"}[r.IntN(6)])
		}
		// Skewed: low words are common, so postings span blocks.
		w := vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)), r.IntN(len(vocab)))]
		if r.IntN(3) == 0 {
			w = strings.ToUpper(w)
		}
		b.WriteString(w)
	}
	return b.String()
}

func randomQuery(r *rand.Rand) Query {
	var q Query
	for range 1 + r.IntN(3) {
		var c Clause
		switch r.IntN(4) {
		case 0, 1:
			c.Terms = Terms(vocab[r.IntN(len(vocab))])
		case 2:
			for range 2 + r.IntN(2) {
				c.Terms = append(c.Terms, Terms(vocab[r.IntN(len(vocab))])...)
			}
			// Phrases of common words, so that some match.
			for k := range c.Terms {
				if r.IntN(2) == 0 {
					c.Terms[k] = Terms(vocab[r.IntN(4)])[0]
				}
			}
		case 3:
			w := Terms(vocab[r.IntN(len(vocab))])[0]
			c.Terms, c.Prefix = []string{w[:1+r.IntN(len(w))]}, true
			if r.IntN(3) == 0 {
				c.Terms = append([]string{Terms(vocab[r.IntN(4)])[0]}, c.Terms...)
			}
		}
		q.Clauses = append(q.Clauses, c)
	}
	switch r.IntN(4) {
	case 0:
		q.Limit = 1 + r.IntN(20)
	case 1:
		q.Limit = 1 + r.IntN(300)
	}
	if r.IntN(4) == 0 {
		role := uint8(r.IntN(3))
		q.Filter = func(m Meta) bool { return m.Role == role }
	}
	if r.IntN(5) == 0 {
		q.Rank = TermFrequency
	}
	if r.IntN(4) == 0 {
		// The first match (from the newest) whose id has a given rest.
		n := uint64(3 + r.IntN(20))
		q.Stop = func(m Meta) bool { return m.ID%n == 0 }
	}
	return q
}

func randomDoc(r *rand.Rand, id uint64) Doc {
	return Doc{ID: id, Text: randomText(r), Role: uint8(r.IntN(3)), Tool: []string{"", "bash", "read", "grep"}[r.IntN(4)],
		Ref: r.Uint64(), Time: int64(id) * 1000}
}

func describe(q Query) string {
	return fmt.Sprintf("%+v limit %d filter %v rank %v stop %v", q.Clauses, q.Limit, q.Filter != nil, q.Rank != nil, q.Stop != nil)
}

func checkQueries(t *testing.T, ix *Index, m *model, r *rand.Rand, n int) {
	t.Helper()
	for range n {
		q := randomQuery(r)
		got, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", describe(q), err)
		}
		want := m.search(q)
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits, want %d", describe(q), len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: hit %d is %+v, want %+v", describe(q), i, got[i], want[i])
			}
		}
	}
}

// TestRoundTripAgainstScan builds indexes of random documents with
// budgets small enough for many segments, commits and merges at random
// points, and checks random queries against a naive scan.
func TestRoundTripAgainstScan(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			fsys := vfstest.NewCrashFS()
			ix, err := Open(fsys, "/idx")
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			m := &model{}
			id := uint64(r.IntN(1000))
			b := ix.NewBuilder(BuildOptions{Budget: int64(MinBudget) << r.IntN(3)})
			for range 4 {
				for range 200 + r.IntN(600) {
					id += 1 + uint64(r.IntN(3))
					d := randomDoc(r, id)
					if err := b.Add(d); err != nil {
						t.Fatal(err)
					}
					m.add(d)
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				checkQueries(t, ix, m, r, 100)
				if r.IntN(2) == 0 {
					if err := ix.Merge(context.Background()); err != nil {
						t.Fatal(err)
					}
					if st := ix.Stats(); st.Segments != 1 {
						t.Fatalf("after a merge, %d segments", st.Segments)
					}
					checkQueries(t, ix, m, r, 50)
				}
			}
			if err := ix.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			// A new Index on the same files answers the same.
			ix2, err := Open(fsys, "/idx")
			if err != nil {
				t.Fatal(err)
			}
			defer ix2.Close()
			checkQueries(t, ix2, m, r, 100)
			if st := ix2.Stats(); st.Docs != int64(len(m.docs)) {
				t.Fatalf("reopened index has %d documents, want %d", st.Docs, len(m.docs))
			}
		})
	}
}

func TestPhrases(t *testing.T) {
	ix, err := Open(vfstest.NewCrashFS(), "/idx")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the flaky migration failed",   // 1
		"flaky tests; migration later", // 2: separators do not break a phrase
		"migration flaky",              // 3: wrong order
		"a a a a",                      // 4
		"flaky\n\nMIGRATION",           // 5
		"flaky something migration",    // 6
		"the end is flaky",             // 7: the phrase does not run into the next document
		"migration starts here",        // 8
	}
	b := ix.NewBuilder(BuildOptions{})
	for i, s := range texts {
		if err := b.Add(Doc{ID: uint64(i + 1), Text: s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ids := func(q string) (out []uint64, freq []int) {
		hits, err := ix.Search(context.Background(), Query{Clauses: ParseQuery(q)})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			out, freq = append(out, h.ID), append(freq, h.Freq)
		}
		return out, freq
	}
	for q, want := range map[string][]uint64{
		`"flaky migration"`:       {5, 1},
		`"flaky tests migration"`: {2},
		`"tests migration"`:       {2},
		`"migration flaky"`:       {3},
		`flaky migration`:         {6, 5, 3, 2, 1},
		`"the flaky"`:             {1},
		`"flaky mig*"`:            {5, 1},
		`"is flaky migration"`:    nil,
		`flaky-migration`:         {5, 1}, // a word of several terms is a phrase
	} {
		if got, _ := ids(q); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	if got, freq := ids(`"a a"`); !slices.Equal(got, []uint64{4}) || freq[0] != 3 {
		t.Errorf(`"a a": %v %v, want [4] with 3 matches`, got, freq)
	}
}

func TestCommitRefusesOldIDs(t *testing.T) {
	ix, _ := Open(vfstest.NewCrashFS(), "/idx")
	b := ix.NewBuilder(BuildOptions{})
	if err := b.Add(Doc{ID: 5, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(Doc{ID: 5, Text: "y"}); err == nil {
		t.Fatal("a repeated id was accepted")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b2 := ix.NewBuilder(BuildOptions{})
	if err := b2.Add(Doc{ID: 3, Text: "z"}); err == nil {
		t.Fatal("an id below the index's was accepted")
	}
	if _, err := ix.Search(context.Background(), Query{}); !errors.Is(err, ErrQuery) {
		t.Fatalf("empty query: %v", err)
	}
}

var _ vfs.FS = (*vfstest.CrashFS)(nil)

// TestMergeNewest: after one large commit and many small ones,
// MergeNewest merges the small segments among themselves and leaves the
// large one as it is; queries answer as before, and the segments stay
// few over many rounds of small commits.
func TestMergeNewest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 44))
	fsys := vfstest.NewCrashFS()
	ix, err := Open(fsys, "/idx")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	m := &model{}
	id := uint64(0)
	commit := func(n int) {
		t.Helper()
		b := ix.NewBuilder(BuildOptions{Budget: 64 << 20})
		for range n {
			id++
			d := randomDoc(r, id)
			if err := b.Add(d); err != nil {
				t.Fatal(err)
			}
			m.add(d)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	commit(3000)
	if st := ix.Stats(); st.Segments != 1 {
		t.Fatalf("%d segments of the first commit", st.Segments)
	}
	bigName := ix.m.segs[0].name
	for range 8 {
		commit(5 + r.IntN(10))
	}
	if err := ix.MergeNewest(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Segments != 2 || ix.m.segs[0].name != bigName {
		t.Fatalf("after MergeNewest: %d segments, the first %s (was %s)", st.Segments, ix.m.segs[0].name, bigName)
	}
	checkQueries(t, ix, m, r, 100)
	for round := range 30 {
		commit(5 + r.IntN(10))
		if ix.Stats().Segments > 8 {
			if err := ix.MergeNewest(context.Background(), 4); err != nil {
				t.Fatal(err)
			}
		}
		if st := ix.Stats(); st.Segments > 8 {
			t.Fatalf("round %d: %d segments", round, st.Segments)
		}
	}
	if ix.m.segs[0].name != bigName {
		t.Errorf("the large segment was merged again for small commits")
	}
	checkQueries(t, ix, m, r, 100)
	// Commits each smaller than the one before (no run of similar sizes
	// to merge): the newest are merged until keep are left, and the
	// large segment stays.
	for _, n := range []int{400, 200, 100, 50, 25, 12, 6, 3, 1} {
		commit(n)
	}
	before := ix.Stats().Segments
	if err := ix.MergeNewest(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Segments != 4 || ix.m.segs[0].name != bigName {
		t.Errorf("after MergeNewest of %d segments of falling sizes: %d segments (want 4), the first %s (want %s)", before, st.Segments, ix.m.segs[0].name, bigName)
	}
	checkQueries(t, ix, m, r, 100)
}

// TestMergeRun: the runs MergeNewest picks, by segment sizes (oldest
// first). A first build leaves many like segments and a short last one;
// after its merge, small segments older than the large one and small
// updates after it are merged among themselves, never with it.
func TestMergeRun(t *testing.T) {
	const big = 1 << 30
	sizes := func(n ...int64) []*segment {
		var out []*segment
		for _, s := range n {
			out = append(out, &segment{size: s})
		}
		return out
	}
	build := make([]int64, 0, 178)
	for range 177 {
		build = append(build, 6<<20)
	}
	build = append(build, 1<<20)
	for _, c := range []struct {
		name   string
		sizes  []int64
		keep   int
		lo, hi int
		over   bool // leaves more than keep: every window is mostly one large segment
	}{
		{"updates after a large one", []int64{big, 10, 12, 9}, 6, 1, 4, false},
		{"falling sizes", []int64{big, 400, 200, 100, 50, 25, 12, 6, 3}, 4, 1, 9, false},
		{"a first build's segments", build, 6, 5, 178, false},
		{"small ones each side of a large one", []int64{6 << 20, 6 << 20, 6 << 20, 6 << 20, 6 << 20, big, 10, 12, 9}, 6, 0, 4, false},
		{"two large ones", []int64{big, big + 1, 10}, 2, 1, 3, false},
		{"all large", []int64{big, big, big}, 2, 0, 3, false},
		{"no window without the large one", []int64{8, 8, 8, big, 8, 8}, 3, 4, 6, true},
		{"a first build's leftovers, then updates", []int64{6 << 20, 6 << 20, 6 << 20, 6 << 20, 6 << 20, big, 300, 300, 300, 300, 300}, 6, 6, 11, true},
		{"a small window before the large one", []int64{8, 8, 8, big, 8}, 3, 0, 3, false},
		{"no newest run to merge instead", []int64{8, big, 8}, 2, 0, 2, false},
		{"a window not mostly one segment", []int64{20, 20, 20, 100, 8, 8}, 3, 2, 6, false},
	} {
		lo, hi := mergeRun(sizes(c.sizes...), c.keep)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s: merges [%d:%d], want [%d:%d]", c.name, lo, hi, c.lo, c.hi)
		}
		if n := len(c.sizes) - (hi - lo) + 1; n > c.keep != c.over {
			t.Errorf("%s: leaves %d segments, keep %d", c.name, n, c.keep)
		}
	}
}

// TestCloseAfterCommit: a Builder closed after its Commit (to let go of
// its tables before the caller's own work) may be closed again, refuses
// documents after, and the index keeps what it committed.
func TestCloseAfterCommit(t *testing.T) {
	ix, _ := Open(vfstest.NewCrashFS(), "/idx")
	defer ix.Close()
	b := ix.NewBuilder(BuildOptions{})
	if err := b.Add(Doc{ID: 1, Text: "kept words"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
	if err := b.Add(Doc{ID: 2, Text: "late"}); !errors.Is(err, errClosed) {
		t.Errorf("Add after Close: %v, want errClosed", err)
	}
	hits, err := ix.Search(context.Background(), Query{Clauses: []Clause{{Terms: []string{"kept"}}}})
	if err != nil || len(hits) != 1 || hits[0].ID != 1 {
		t.Errorf("after Close: %+v, %v; want document 1", hits, err)
	}
}
