package search

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search/internal/textindex"
)

// TestEnginesAgree is the differential test of the two engines: random
// sessions, random queries (words, phrases, prefixes, OR, NOT, NEAR,
// parentheses, with random role, tool, time and cwd filters and limits),
// before and after the sessions grow, shrink, are replaced and deleted:
// FTS5 and the own engine give the same hits, in the same order, with
// the same snippets.
func TestEnginesAgree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	r := rand.New(rand.NewPCG(44, 2))
	var paths []string
	for i := range 12 {
		cwd := fmt.Sprintf("/home/dev/p%d", i%3)
		p := filepath.Join(root, fmt.Sprintf("--p%d--", i%3), fmt.Sprintf("s%02d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		o := workload.Options{Seed: uint64(i + 1), Entries: 20 + r.IntN(40), ToolResultMin: 100, ToolResultMax: 2000,
			ImageEvery: -1, Cwd: cwd, Start: time.Date(2026, 3, 1+i, 9, 0, 0, 0, time.UTC)}
		if i%5 == 4 {
			o.Version = 1
		}
		if _, err := workload.WriteFile(p, o); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	fx := openIndex(t, Options{Engine: EngineFTS5})
	ox := openIndex(t, Options{Engine: EngineOwn})
	words := func() []string {
		var out []string
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				e, err := jsonl.ParseEntry([]byte(line))
				if err != nil {
					continue
				}
				for _, d := range lineDocs(&e, nil) {
					out = append(out, textindex.Terms(d.text)...)
				}
			}
		}
		return out
	}
	roles := []string{"", "", "", "", RoleUser, RoleAssistant, RoleTool, RoleOther}
	tools := []string{"", "", "", "", "", "", "bash", "read", "edit"}
	nonEmpty, bad := 0, 0
	compare := func(stage string, n int) {
		ws := words()
		pick := func() string { return ws[r.IntN(len(ws))] }
		for k := range n {
			i := r.IntN(len(ws) - 3)
			var text string
			switch k % 10 {
			case 0:
				text = pick()
			case 1:
				text = pick() + " " + pick()
			case 2:
				text = `"` + ws[i] + " " + ws[i+1] + `"`
			case 3:
				w := pick()
				text = w[:min(len(w), 1+r.IntN(3))] + "*"
			case 4:
				text = pick() + " OR " + pick()
			case 5:
				text = ws[i] + " NOT " + pick()
			case 6:
				text = "NEAR(" + ws[i] + " " + ws[i+2] + ", 3)"
			case 7:
				text = "(" + pick() + " OR " + pick() + ") AND " + ws[i]
			case 8:
				text = `"` + ws[i] + " " + ws[i+1] + ` "* OR ` + pick() + " " + pick()
			case 9:
				// A column filter: the own engine reads the files.
				text = "text:" + pick()
			}
			q := Query{Text: text, Stores: stores, Role: roles[r.IntN(len(roles))], Tool: tools[r.IntN(len(tools))]}
			if r.IntN(3) == 0 {
				q.Limit = 1 + r.IntN(10)
			}
			if r.IntN(6) == 0 {
				q.Since = time.Date(2026, 3, 1+r.IntN(12), 0, 0, 0, 0, time.UTC)
			}
			if r.IntN(6) == 0 {
				q.Until = time.Date(2026, 3, 1+r.IntN(14), 0, 0, 0, 0, time.UTC)
			}
			if r.IntN(6) == 0 {
				q.Cwd = fmt.Sprintf("/home/dev/p%d", r.IntN(3))
			}
			want, werr := collect(fx, q)
			got, gerr := collect(ox, q)
			if (werr == nil) != (gerr == nil) || werr != nil && errors.Is(werr, ErrQuery) != errors.Is(gerr, ErrQuery) {
				t.Fatalf("%s: %+v: fts5 error %v, own error %v", stage, q, werr, gerr)
			}
			if len(want) > 0 {
				nonEmpty++
			}
			if werr != nil {
				bad++
			}
			if diff := cmp.Diff(want, got, ignoreShort); diff != "" {
				t.Errorf("%s: %q role %q tool %q limit %d since %v until %v cwd %q (-fts5 +own):\n%s", stage, q.Text, q.Role, q.Tool, q.Limit, q.Since, q.Until, q.Cwd, diff)
			}
		}
	}
	compare("first", 150)
	// Grown (the common case), shrunk, replaced, deleted.
	for _, p := range paths[:4] {
		appendLines(t, p, userLine(fmt.Sprintf("g%d", r.IntN(1e6)), "", "2026-04-01T10:00:00.000Z", "grown zebra "+filepath.Base(p)))
	}
	data, _ := os.ReadFile(paths[4])
	if err := os.WriteFile(paths[4], data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := workload.WriteFile(paths[5]+".new", workload.Options{Seed: 99, Entries: 30, ToolResultMin: 100, ToolResultMax: 2000, ImageEvery: -1}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(paths[5]+".new", paths[5]); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(paths[6]); err != nil {
		t.Fatal(err)
	}
	paths = append(paths[:6], paths[7:]...)
	compare("after changes", 150)
	if h := searchAll(t, ox, Query{Text: "zebra", Stores: stores}); len(h) != 4 {
		t.Errorf("zebra after 4 appends: %v", h)
	}
	t.Logf("%d of 300 queries had hits, %d were errors", nonEmpty, bad)
	if nonEmpty < 100 {
		t.Errorf("only %d of 300 queries had hits: the test compares too little", nonEmpty)
	}
}
