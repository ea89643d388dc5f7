package tree_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// build indexes lines "id<parent" (parent "-" for null, "?" for missing),
// optionally with extra JSON members after a space.
func build(t *testing.T, specs ...string) *tree.Index {
	t.Helper()
	var buf strings.Builder
	buf.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	for i, spec := range specs {
		extra := ""
		if k := strings.IndexByte(spec, ' '); k >= 0 {
			spec, extra = spec[:k], ","+strings.TrimSuffix(strings.TrimPrefix(spec[k+1:], "{"), "}")
		}
		id, parent, _ := strings.Cut(spec, "<")
		typ := "message"
		if strings.Contains(extra, `"type"`) {
			typ = ""
		}
		p := `"parentId":"` + parent + `",`
		switch parent {
		case "-":
			p = `"parentId":null,`
		case "?":
			p = ""
		}
		ts := fmt.Sprintf("2026-01-01T00:00:%02d.000Z", 59-i%60) // later lines have earlier times
		line := `{` + p + `"id":"` + id + `","timestamp":"` + ts + `"` + extra
		if typ != "" {
			line += `,"type":"` + typ + `"`
		}
		buf.WriteString(line + "}\n")
	}
	p := jsonl.ParseFile([]byte(buf.String()))
	if len(p.Malformed) > 0 {
		t.Fatalf("bad fixture: %+v", p.Malformed)
	}
	return tree.Build(p.Entries)
}

func ids(es []*jsonl.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// shape renders a tree as "id(child,child)".
func shape(nodes []*tree.Node) string {
	var b strings.Builder
	first := []bool{true}
	tree.Walk(nodes, func(n *tree.Node, depth int) bool {
		if !first[len(first)-1] {
			b.WriteByte(',')
		}
		first[len(first)-1] = false
		b.WriteString(n.Key)
		if n.HasLabel {
			b.WriteString("[" + n.Label + "]")
		}
		b.WriteByte('(')
		first = append(first, true)
		return true
	}, func(*tree.Node, int) {
		b.WriteByte(')')
		first = first[:len(first)-1]
	})
	return b.String()
}

func TestBranchAndTree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		specs    []string
		branchOf string
		branch   []string
		tree     string
	}{
		{"linear", []string{"a<-", "b<a", "c<b"}, "c", []string{"a", "b", "c"}, "a(b(c()))"},
		{"children sorted by time, roots in file order", []string{"a<-", "b<a", "c<a", "r<-"}, "c", []string{"a", "c"}, "a(c(),b()),r()"},
		{"orphan is a root", []string{"a<-", "o<ghost"}, "o", []string{"o"}, "a(),o()"},
		{"missing parentId is a root", []string{"a<?", "b<a"}, "b", []string{"a", "b"}, "a(b())"},
		{"self parent is a root and its branch ends", []string{"a<a", "b<a"}, "b", []string{"a", "b"}, "a(b())"},
		{"cycle entries vanish from the tree, branch stops", []string{"a<-", "x<y", "y<x"}, "x", []string{"y", "x"}, "a()"},
		{"duplicate id: last copy wins, node is not entered twice on a path", []string{"a<-", "b<a", "a<b"}, "b", []string{"a", "b"}, "a(b())"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ix := build(t, c.specs...)
			if diff := cmp.Diff(c.branch, ids(ix.Branch(c.branchOf))); diff != "" {
				t.Errorf("branch (-want +got):\n%s", diff)
			}
			got := shape(ix.Tree()) // must terminate even with repeats
			if c.tree != "" && got != c.tree {
				t.Errorf("tree %s, want %s", got, c.tree)
			}
		})
	}
}

func TestChildrenLabelsNameLeaf(t *testing.T) {
	t.Parallel()
	ix := build(t,
		`a<-`,
		`b<a`,
		`c<a`,
		`l1<c {"type":"label","targetId":"b","label":"first"}`,
		`l2<l1 {"type":"label","targetId":"a","label":"root"}`,
		`l3<l2 {"type":"label","targetId":"b","label":""}`,
		`l4<l3 {"type":"label","targetId":"b","label":"again"}`,
		`n1<l4 {"type":"session_info","name":"  named  "}`,
		`n2<n1 {"type":"session_info","name":""}`,
		`g<n2 {"type":"label","targetId":"ghost","label":"orphan label"}`,
	)
	if diff := cmp.Diff([]string{"b", "c"}, ix.Children("a")); diff != "" {
		t.Errorf("children of a in first-appearance order:\n%s", diff)
	}
	// Cleared and set again: b moves to the end of the map order.
	want := []tree.LabelPair{{Target: "a", Label: "root"}, {Target: "b", Label: "again"}, {Target: "ghost", Label: "orphan label"}}
	if diff := cmp.Diff(want, ix.Labels()); diff != "" {
		t.Errorf("labels:\n%s", diff)
	}
	if n, ok := ix.Name(); ok {
		t.Errorf("name %q: the last session_info has an empty name, which clears it", n)
	}
	if id, kind := ix.Leaf(); id != "g" || kind != jsonl.KindString {
		t.Errorf("leaf %q %v, want the last line", id, kind)
	}
}

// A chain far deeper than any goroutine stack would allow recursion over.
func TestDeepChainDoesNotRecurse(t *testing.T) {
	t.Parallel()
	const n = 200000
	specs := make([]string, n)
	specs[0] = "e0<-"
	for i := 1; i < n; i++ {
		specs[i] = fmt.Sprintf("e%d<e%d", i, i-1)
	}
	ix := build(t, specs...)
	if got := len(ix.Branch(fmt.Sprintf("e%d", n-1))); got != n {
		t.Fatalf("branch length %d, want %d", got, n)
	}
	depth := 0
	tree.Walk(ix.Tree(), func(_ *tree.Node, d int) bool { depth = max(depth, d); return true }, nil)
	if depth != n-1 {
		t.Fatalf("walk reached depth %d, want %d", depth, n-1)
	}
}

// Loop finds the parent-id loops on which pi's getBranch never ends, and
// only those.
func TestLoop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		specs []string
		from  string
		at    string // "" for no loop
	}{
		{"linear", []string{"a<-", "b<a", "c<b"}, "c", ""},
		{"orphan", []string{"a<-", "o<ghost"}, "o", ""},
		{"missing parentId", []string{"a<?", "b<a"}, "b", ""},
		{"empty parentId ends the walk", []string{"a<", "b<a"}, "b", ""},
		{"unknown id", []string{"a<-"}, "zz", ""},
		{"self parent", []string{"a<a"}, "a", "a"},
		{"child of a self parent", []string{"a<a", "b<a"}, "b", "a"},
		{"cycle", []string{"a<-", "x<y", "y<x"}, "x", "x"},
		{"entry leading into a cycle", []string{"x<y", "y<x", "c<x", "d<c"}, "d", "x"},
		{"duplicate id closes a loop", []string{"a<-", "b<a", "a<b"}, "b", "b"},
		{"duplicate id without a loop", []string{"a<-", "b<a", "b<a"}, "b", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ix := build(t, c.specs...)
			e, ok := ix.Loop(c.from)
			got := ""
			if ok {
				got = e.ID
			}
			if got != c.at {
				t.Errorf("Loop(%s) = %q, %v; want %q", c.from, got, ok, c.at)
			}
		})
	}
}

// TestBranchAtRefusesWrongPositions gives BranchAt parent positions that
// do not fit the entries: a position whose entry has another key than
// the parent id, a header, one past the end. Each is refused.
func TestBranchAtRefusesWrongPositions(t *testing.T) {
	t.Parallel()
	entries := slicesOf(build(t, "a<-", "b<a", "c<b").Entries())
	all := append([]jsonl.Entry{{Type: jsonl.TypeSession}}, entries...) // a header first
	parents := tree.ParentPositions(all)
	if want := []int32{-1, -1, 1, 2}; fmt.Sprint(parents) != fmt.Sprint(want) {
		t.Fatalf("ParentPositions = %v, want %v", parents, want)
	}
	if path, ok := tree.BranchAt(all, parents, 3); !ok || fmt.Sprint(ids(path)) != "[a b c]" {
		t.Fatalf("BranchAt = %v, %v", ids(path), ok)
	}
	for _, bad := range []int32{1, 0, 4} {
		p := []int32{-1, -1, 1, bad} // c's parent b is at 2
		if _, ok := tree.BranchAt(all, p, 3); ok {
			t.Errorf("BranchAt followed position %d for c's parent", bad)
		}
	}
}

func slicesOf(es []*jsonl.Entry) []jsonl.Entry {
	out := make([]jsonl.Entry, len(es))
	for i, e := range es {
		out[i] = *e
	}
	return out
}

// TestNameIsTheLastSessionInfo checks pi 0.73.1's getSessionName: the
// trimmed name of the last session_info in file order, on whatever
// branch; an empty, blank or missing name clears it (0.58.3 skipped such
// entries and kept the previous name, untrimmed).
func TestNameIsTheLastSessionInfo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		names  []string // the session_info entries' name members (JSON), in order
		want   string
		wantOK bool
	}{
		{"trimmed", []string{`"  named  "`}, "named", true},
		{"empty clears", []string{`"a"`, `""`}, "", false},
		{"blank clears", []string{`"a"`, `"  \t "`}, "", false},
		{"missing clears", []string{`"a"`, ``}, "", false},
		{"null clears", []string{`"a"`, `null`}, "", false},
		{"set again", []string{`"a"`, `""`, `"b"`}, "b", true},
		{"none", nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			specs := []string{`a<-`, `b<a`, `c<a`} // c on a branch of its own
			parent := "c"
			for i, n := range c.names {
				id := fmt.Sprintf("n%d", i)
				member := ""
				if n != "" {
					member = `,"name":` + n
				}
				// Alternate branches: the name is global.
				if i%2 == 1 {
					parent = "b"
				}
				specs = append(specs, id+"<"+parent+` {"type":"session_info"`+member+`}`)
				parent = id
			}
			n, ok := build(t, specs...).Name()
			if n != c.want || ok != c.wantOK {
				t.Errorf("Name() = %q, %v; want %q, %v", n, ok, c.want, c.wantOK)
			}
		})
	}
}

// TestLabelTimestamps checks pi 0.73.1's labelTimestamp: the timestamp of
// the label entry that last set an entry's label, as written; none once
// the label is cleared, nor when that entry has no timestamp.
func TestLabelTimestamps(t *testing.T) {
	t.Parallel()
	ix := build(t,
		`a<-`,
		`b<a`,
		`l1<b {"type":"label","targetId":"a","label":"first","timestamp":"2026-02-01T00:00:00.000Z"}`,
		`l2<l1 {"type":"label","targetId":"a","label":"second","timestamp":"2026-02-02T00:00:00.000Z"}`,
		`l3<l2 {"type":"label","targetId":"b","label":"b","timestamp":"2026-02-03T00:00:00.000Z"}`,
		`l4<l3 {"type":"label","targetId":"b","timestamp":"2026-02-04T00:00:00.000Z"}`,
		`l5<l4 {"type":"label","targetId":"l1","label":"odd","timestamp":12345}`,
	)
	want := map[string]string{"a": `"2026-02-02T00:00:00.000Z"`, "l1": `12345`}
	for _, id := range []string{"a", "b", "l1", "l2"} {
		ts, ok := ix.LabelTimestamp(id)
		if w, has := want[id]; ok != has || string(ts) != w {
			t.Errorf("LabelTimestamp(%s) = %s, %v; want %s", id, ts, ok, w)
		}
	}
	got := map[string]string{}
	tree.Walk(ix.Tree(), func(n *tree.Node, _ int) bool {
		if n.LabelTimestamp != nil {
			got[n.Key] = string(n.LabelTimestamp)
		}
		return true
	}, nil)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree nodes' label timestamps (-want +got):\n%s", diff)
	}
	// A label entry without a timestamp: the label, no time.
	ix = build(t, `a<-`)
	ix.Add(mustEntry(t, `{"type":"label","id":"l","parentId":"a","targetId":"a","label":"x"}`))
	if ts, ok := ix.LabelTimestamp("a"); ok || ix.Tree()[0].LabelTimestamp != nil {
		t.Errorf("label without a timestamp: LabelTimestamp %s, %v", ts, ok)
	}
}

func mustEntry(t *testing.T, line string) *jsonl.Entry {
	t.Helper()
	e, err := jsonl.ParseEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return &e
}
