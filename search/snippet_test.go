package search

import (
	"context"
	"errors"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout/vfs"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/layout"
)

// TestOwnOpensNoSQLite: a search with the own engine, and one without an
// index, open no FTS5 snippet table, for a query the own index answers
// and for ones it leaves to a read of the files (a column filter, ^);
// the FTS5 engine opens one, so the count can tell. Their hits are the
// same.
func TestOwnOpensNoSQLite(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	queries := []string{"migration", `"migration races" OR lock*`, "text:migration", "^the", "NEAR(flaky test)"}
	var want [][]Hit
	for _, tc := range []struct {
		name string
		o    Options
		sql  bool
	}{{"fts5", Options{Engine: EngineFTS5}, true}, {"own", Options{Engine: EngineOwn}, false}, {"no index", Options{NoIndex: true}, false}} {
		x := openIndex(t, tc.o)
		before := ftsSnippers.Load()
		for i, q := range queries {
			hits, err := collect(x, Query{Text: q, Stores: stores})
			if err != nil {
				t.Fatalf("%s: %q: %v", tc.name, q, err)
			}
			if len(hits) == 0 {
				t.Errorf("%s: %q: no hit", tc.name, q)
			}
			if want == nil || len(want) <= i {
				want = append(want, hits)
			} else if diff := cmp.Diff(want[i], hits, ignoreShort); diff != "" {
				t.Errorf("%s: %q: hits differ from FTS5's (-fts5 +%s):\n%s", tc.name, q, tc.name, diff)
			}
		}
		if opened := ftsSnippers.Load() - before; (opened > 0) != tc.sql {
			t.Errorf("%s: %d FTS5 snippet tables opened", tc.name, opened)
		}
	}
}

// TestOwnPathImportsNoSQL: the files of the own engine's search and of
// the search without an index do not import database/sql, so no SQLite
// is reached from them but through the FTS5 engine's files.
func TestOwnPathImportsNoSQL(t *testing.T) {
	for _, f := range []string{"ownindex.go", "ownquery.go", "match.go", "matchparse.go", "snippet.go", "scan.go"} {
		ast, err := parser.ParseFile(gotoken.NewFileSet(), filepath.Join(".", f), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range ast.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == "database/sql" || strings.Contains(p, "sqlite") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

// TestQueryErrorsAgree: a query FTS5 refuses is refused by every engine
// with FTS5's words for what is wrong.
func TestQueryErrorsAgree(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	cases := map[string]string{
		"":                  "the query is empty",
		`"unterminated`:     "unterminated string",
		"nosuchcolumn:word": "no such column: nosuchcolumn",
		"a AND":             `fts5: syntax error near ""`,
		"(a":                `fts5: syntax error near ""`,
		"a.b":               `fts5: syntax error near "."`,
		"NEAR(a b, x)":      `expected integer, got "x"`,
		"a (b)":             `fts5: syntax error near "a"`,
		"OR":                `fts5: syntax error near "OR"`,
	}
	for _, o := range []Options{{Engine: EngineFTS5}, {Engine: EngineOwn}, {NoIndex: true}} {
		x := openIndex(t, o)
		for q, msg := range cases {
			_, err := collect(x, Query{Text: q, Stores: stores})
			if !errors.Is(err, ErrQuery) || err.Error() != ErrQuery.Error()+": "+msg {
				t.Errorf("%+v: query %q: got %v, want ErrQuery: %s", o, q, err, msg)
			}
		}
	}
}

// BenchmarkSnippets matches and marks the texts a search with --limit 20
// marks (28: the limit and 8 more), in Go and in an FTS5 table.
func BenchmarkSnippets(b *testing.B) {
	p := filepath.Join(b.TempDir(), "s.jsonl")
	if _, err := workload.WriteFile(p, workload.Options{Seed: 1, Entries: 200, ToolResultMin: 200, ToolResultMax: 8000, ImageEvery: -1}); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, line := range strings.Split(string(data), "\n") {
		e, err := jsonl.ParseEntry([]byte(line))
		if err != nil {
			continue
		}
		for _, d := range lineDocs(&e, nil) {
			if strings.Contains(strings.ToLower(d.text), "err") && len(texts) < 28 {
				texts = append(texts, cleanText(d.text))
			}
		}
	}
	ctx := context.Background()
	fs, err := newFTSSnipper(ctx, vfs.OS())
	if err != nil {
		b.Fatal(err)
	}
	defer fs.close()
	gs, _ := newSnipper(ctx, vfs.OS())
	for _, s := range []struct {
		name  string
		match func(context.Context, string, []string) (map[int]string, error)
	}{{"go", gs.match}, {"fts5", fs.match}} {
		b.Run(s.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				m, err := s.match(ctx, "err", texts)
				if err != nil {
					b.Fatal(err)
				}
				n = len(m)
			}
			if n == 0 {
				b.Fatal("no match")
			}
		})
	}
}
