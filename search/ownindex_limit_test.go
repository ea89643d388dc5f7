package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/layout"
)

// TestOwnLimitIsPrefix: a query with a limit gives the first hits of the
// same query without one, in the same order, over texts whose times
// follow the documents' ids only roughly (files indexed in the order of
// their modification times, texts older and newer than their file's,
// many equal times), after appends of old and new texts and a replaced
// file: the own engine's early stop never loses or reorders a hit.
func TestOwnLimitIsPrefix(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(44, 20))
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(day int) string {
		// Three times a day, so that many texts share a time.
		ts := base.Add(time.Duration(day)*24*time.Hour + time.Duration(r.IntN(3))*time.Hour)
		switch r.IntN(1000) / 10 {
		case 0:
			if r.IntN(10) == 0 {
				ts = base.Add(time.Duration(r.IntN(70)) * 24 * time.Hour) // anywhere
			}
		case 1, 2, 3, 4, 5:
			ts = ts.Add(-time.Duration(r.IntN(10)) * 24 * time.Hour) // older
		}
		return ts.Format("2006-01-02T15:04:05.000Z")
	}
	text := func() string {
		var sb strings.Builder
		sb.WriteString("common")
		for range 1 + r.IntN(4) {
			sb.WriteString(" " + words[r.IntN(len(words))])
		}
		return sb.String()
	}
	lineNo := 0
	at := func(ts string, n int) []string {
		var out []string
		for range n {
			lineNo++
			out = append(out, userLine(fmt.Sprintf("e%d", lineNo), "", ts, text()))
		}
		return out
	}
	lines := func(day, n int) []string {
		var out []string
		for range n {
			out = append(out, at(stamp(day), 1)...)
		}
		return out
	}
	writeLines := func(p string, day int, ls []string) {
		body := header(filepath.Base(p), "/home/dev/p", "2026-03-01T00:00:00.000Z") + "\n" + strings.Join(ls, "\n") + "\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		// Modification times mostly in the order of the texts' days.
		mt := time.Now().Add(-time.Duration(100-day+r.IntN(3)) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, day, n int) { writeLines(p, day, lines(day, n)) }
	var paths []string
	for i := range 20 {
		p := filepath.Join(root, fmt.Sprintf("s%02d.jsonl", i))
		write(p, 3*i, 60+r.IntN(60))
		paths = append(paths, p)
	}
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{Engine: EngineOwn})
	queries := []string{"common", "alpha", "alpha beta", `"alpha beta"`, "gam*", "common theta", "alpha OR zeta", "common NOT beta"}
	roles := []string{"", "", "", RoleUser, RoleAssistant}
	check := func(stage string) {
		for _, text := range queries {
			for range 2 {
				q := Query{Text: text, Stores: stores, Role: roles[r.IntN(len(roles))]}
				all, err := collect(x, q)
				if err != nil {
					t.Fatalf("%s: %q: %v", stage, text, err)
				}
				q.Limit = 1 + r.IntN(100)
				got, err := collect(x, q)
				if err != nil {
					t.Fatalf("%s: %q limit %d: %v", stage, text, q.Limit, err)
				}
				want := all[:min(q.Limit, len(all))]
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: %q role %q limit %d (of %d; -unlimited +limited):\n%s", stage, text, q.Role, q.Limit, len(all), diff)
				}
			}
		}
	}
	check("first")
	for range 6 {
		p := paths[r.IntN(len(paths))]
		appendLines(t, p, lines(r.IntN(70), 1+r.IntN(30))...)
	}
	check("after appends")
	write(paths[3], 65, 80) // replaced, newest texts in an old place
	write(paths[7], 1, 80)  // replaced, oldest texts
	check("after replacing")
	// The newest texts (two, in the first file) sit below a whole block
	// of old ones, under as many as a limit asks for of the same time: a
	// search must walk past the old block for them, and they come first
	// (their file's name sorts first).
	newest := "2026-06-01T00:00:00.000Z"
	appendLines(t, paths[0], at(newest, 2)...)
	check("newest appended")
	writeLines(filepath.Join(root, "s90.jsonl"), 0, lines(0, 2*ownTimeBlock))
	check("an old file added")
	writeLines(filepath.Join(root, "s95.jsonl"), 80, at(newest, 100))
	q := Query{Text: "common", Stores: stores}
	all, err := collect(x, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 || all[0].File != paths[0] || all[1].File != paths[0] {
		t.Fatalf("the newest texts are not first: %+v", all[:min(3, len(all))])
	}
	for _, n := range []int{1, 2, 3, 20, 60} {
		q.Limit = n
		got, err := collect(x, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all[:n], got); diff != "" {
			t.Errorf("limit %d (-unlimited +limited):\n%s", n, diff)
		}
	}
}
