package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"

	"github.com/sessctl/sessctl/search/internal/textindex"
)

// ftsOracle is an in-memory FTS5 table with the index's tokenizer: what
// the matcher must agree with.
type ftsOracle struct {
	conn *sql.Conn
	last []string // the texts in the table
}

func newFTSOracle(t *testing.T) *ftsOracle {
	t.Helper()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), `CREATE VIRTUAL TABLE o USING fts5(text, tokenize='`+tokenizer+`')`); err != nil {
		t.Fatal(err)
	}
	return &ftsOracle{conn: conn}
}

// run returns, for each text that matches, its highlight() with the
// matches between \x01 and \x02, or FTS5's error (as check words it).
func (o *ftsOracle) run(t *testing.T, query string, texts []string) (map[int]string, string) {
	t.Helper()
	ctx := context.Background()
	if !slices.Equal(texts, o.last) {
		if _, err := o.conn.ExecContext(ctx, `DELETE FROM o`); err != nil {
			t.Fatal(err)
		}
		for i, s := range texts {
			if _, err := o.conn.ExecContext(ctx, `INSERT INTO o(rowid, text) VALUES(?, ?)`, i, s); err != nil {
				t.Fatal(err)
			}
		}
		o.last = slices.Clone(texts)
	}
	rows, err := o.conn.QueryContext(ctx, `SELECT rowid, highlight(o, 0, char(1), char(2)) FROM o WHERE o MATCH ?`, query)
	out := map[int]string{}
	if err == nil {
		for rows.Next() {
			var i int
			var h string
			if err := rows.Scan(&i, &h); err != nil {
				t.Fatal(err)
			}
			out[i] = h
		}
		err = rows.Err()
		rows.Close()
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "SQL logic error: ")
		return nil, strings.TrimSuffix(msg, " (1)")
	}
	return out, ""
}

// goRun is run with the matcher.
func goRun(query string, texts []string) (map[int]string, string) {
	q, err := parseMatch(query)
	if err != nil {
		if !errors.Is(err, ErrQuery) {
			return nil, "not ErrQuery: " + err.Error()
		}
		return nil, strings.TrimPrefix(err.Error(), ErrQuery.Error()+": ")
	}
	m := newMatcher(q)
	out := map[int]string{}
	for i, s := range texts {
		if h, ok := m.highlight(s); ok {
			out[i] = h
			if !m.match(s) {
				out[i] = "highlight but no match"
			}
		} else if m.match(s) {
			out[i] = "match but no highlight"
		}
	}
	return out, ""
}

func compareOracle(t *testing.T, o *ftsOracle, query string, texts []string) bool {
	t.Helper()
	want, werr := o.run(t, query, texts)
	got, gerr := goRun(query, texts)
	if werr != gerr {
		t.Errorf("query %q: FTS5 error %q, matcher error %q", query, werr, gerr)
		return false
	}
	for i, s := range texts {
		if want[i] != got[i] && !(relaxed(query) && marksWithin(got[i], want[i])) {
			t.Errorf("query %q, text %q:\nFTS5    %q\nmatcher %q", query, s, want[i], got[i])
			return false
		}
	}
	return true
}

// relaxed reports whether FTS5 may mark more than the matcher: under a
// NOT, or a NEAR group that an OR passes by (see match.go).
func relaxed(query string) bool {
	return strings.Contains(query, "NOT") || strings.Contains(query, "NEAR") && strings.Contains(query, "OR")
}

// marksWithin reports whether a and b are the same text and a marks
// only bytes that b marks: under a NOT, FTS5 may mark more than the
// matcher (see match.go).
func marksWithin(a, b string) bool {
	marked := func(h string) (string, []bool) {
		var sb strings.Builder
		var m []bool
		in := false
		for i := range len(h) {
			switch h[i] {
			case 1:
				in = true
			case 2:
				in = false
			default:
				sb.WriteByte(h[i])
				m = append(m, in)
			}
		}
		return sb.String(), m
	}
	ta, ma := marked(a)
	tb, mb := marked(b)
	if ta != tb || a == "" != (b == "") {
		return false
	}
	for i := range ma {
		if ma[i] && !mb[i] {
			return false
		}
	}
	return true
}

// TestMatchCases: queries of every kind the query language has, and
// wrong ones, against FTS5.
func TestMatchCases(t *testing.T) {
	o := newFTSOracle(t)
	texts := []string{"a b c", "b c a", "x a y b z", "café ａ a_b don't", "A B a b a", "c a b c a b", "", "b\u0301 a\u0301bc", "abc abd ab"}
	for _, q := range []string{
		"a", "b", `"a b"`, "a*", "ab*", `"a b"*`, "a b", "a OR b", "a AND b", "a NOT b", "a NOT b NOT c", "a OR b AND c",
		"(a OR b) AND c", "NEAR(a b)", "NEAR(a b, 0)", "NEAR(a b, 1)", "NEAR(a c, 2)", "NEAR(a b c, 0)", `NEAR("a b" c)`, "NEAR(a)",
		"NEAR(a b, x)", "NEAR(a b,)", "near(a b)", "foo(a b)", "near(a b, x)", "a:b", `"a`, "{}:a", "a:", ":a", "+a", "a +",
		"TEXT:a", `"text":a`, "{text}:a", "-{text}:a", "-text:a", "a NOT -text:b", "text:(a OR -text:b)", "^a", "^b", "NEAR(^a b)",
		"a* + b", "a + b*", "a+b", "(a) b", "a (b)", "(a OR b) c", "a AND", "a OR", "a NOT", "NOT a", "AND a", "()", "(a", "a)",
		`a ""`, `a "."`, `"." NOT a`, `NEAR(a "." b)`, `""`, `"."`, "*a b", "**", "*", " *a", "a.b", "don't", "OR", `"OR"`,
		"NEAR", "NEAR a", "NEAR(a b, -1)", "NEAR(a b, 1 2)", "{text", "-a:b", "a - b", "a - text", "{a b}:c", "{text a", "^text:a",
		"text:^a", "(a)(b)", "text:(a) b", "NEAR(a b)*", "^NEAR(a b)", "^(a)", "a^", "^", "a\tb", "a\fb", "cafe", "ａ", "a_b", "é",
		"NEAR(a b, 99999999999)", "a\x00 OR", "a AND (b OR c) NOT x", "a b OR c NOT b", `"a""b"`, `a"b"`,
	} {
		compareOracle(t, o, q, texts)
	}
	// A word is cut at textindex.MaxTermLen bytes, in texts and queries:
	// a longer word also finds those that begin with its first bytes,
	// which FTS5 does not.
	long := strings.Repeat("w", textindex.MaxTermLen)
	long1, long2 := long+"one", long+"two"
	if got, _ := goRun(long1, []string{long2}); got[0] != "\x01"+long2+"\x02" {
		t.Errorf("a long word: got %v, want %q marked", got, long2)
	}
	if want, _ := o.run(t, long1, []string{long2}); len(want) != 0 {
		t.Errorf("FTS5 found %q in %q: %v", long1, long2, want)
	}
	// FTS5's special queries fail with highlight() ("no such cursor"):
	// the matcher refuses them.
	for _, q := range []string{"*reads", "*ID x"} {
		if _, err := parseMatch(q); !errors.Is(err, ErrQuery) {
			t.Errorf("query %q: %v, want ErrQuery", q, err)
		}
	}
}

// TestMatchRandom: random queries over random texts give FTS5's
// matches, highlights and errors.
func TestMatchRandom(t *testing.T) {
	o := newFTSOracle(t)
	r := rand.New(rand.NewPCG(1, 44))
	words := []string{"a", "b", "c", "ab", "abc", "b", "a", "Café", "cafe", "x", "É", "naïve"}
	seps := []string{" ", " ", " ", ", ", ".", "\n", "_", " - ", "'"}
	text := func() string {
		var sb strings.Builder
		for k := range r.IntN(12) {
			if k > 0 {
				sb.WriteString(seps[r.IntN(len(seps))])
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	qwords := []string{"a", "b", "c", "ab", "cafe", "x", "naive", "zz"}
	var expr func(depth int) string
	phrase := func() string {
		switch r.IntN(6) {
		case 0:
			return `"` + qwords[r.IntN(len(qwords))] + " " + qwords[r.IntN(len(qwords))] + `"`
		case 1:
			w := qwords[r.IntN(len(qwords))]
			return w[:1+r.IntN(len(w))] + "*"
		case 2:
			return qwords[r.IntN(len(qwords))] + " + " + qwords[r.IntN(len(qwords))]
		case 3:
			return "^" + qwords[r.IntN(len(qwords))]
		}
		return qwords[r.IntN(len(qwords))]
	}
	expr = func(depth int) string {
		if depth > 2 {
			return phrase()
		}
		switch r.IntN(9) {
		case 0:
			return expr(depth+1) + " OR " + expr(depth+1)
		case 1:
			return expr(depth+1) + " AND " + expr(depth+1)
		case 2:
			return expr(depth+1) + " NOT " + expr(depth+1)
		case 3:
			return "(" + expr(depth+1) + ")"
		case 4:
			ps := []string{strings.TrimPrefix(phrase(), "^")}
			for range r.IntN(3) {
				ps = append(ps, strings.TrimPrefix(phrase(), "^"))
			}
			return fmt.Sprintf("NEAR(%s, %d)", strings.Join(ps, " "), r.IntN(4))
		case 5:
			return phrase() + " " + phrase()
		case 6:
			return []string{"text:", "-text:", "{text}:"}[r.IntN(3)] + phrase()
		}
		return phrase()
	}
	// Some queries are broken on purpose: a token dropped or added.
	junk := []string{"(", ")", "OR", "NOT", "*", ":", "+", ",", "^", "{", "}", "-", `"`, ".", "NEAR(", "x:"}
	failures := 0
	rounds := 2000 * testScale
	if raceEnabled {
		rounds = 300 // the oracle, SQLite, is translated C: slow under -race
	}
	for range rounds {
		q := expr(0)
		if r.IntN(5) == 0 {
			i := r.IntN(len(q) + 1)
			q = q[:i] + junk[r.IntN(len(junk))] + q[i:]
		}
		texts := make([]string, 12)
		for i := range texts {
			texts[i] = text()
		}
		if !compareOracle(t, o, q, texts) {
			if failures++; failures > 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// testScale multiplies TestMatchRandom's rounds (raise it locally for a
// longer run: 5 has passed).
const testScale = 1

// TestMatchWorkload: on session-like texts (long tool results, code,
// accents), the common queries (a word, several, a phrase, a prefix)
// give exactly FTS5's matches and marks.
func TestMatchWorkload(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if _, err := workload.WriteFile(p, workload.Options{Seed: 3, Entries: 60, ToolResultMin: 200, ToolResultMax: 6000, ImageEvery: -1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var texts, words []string
	for _, line := range strings.Split(string(data), "\n") {
		e, err := jsonl.ParseEntry([]byte(line))
		if err != nil {
			continue
		}
		for _, d := range lineDocs(&e, nil) {
			texts = append(texts, cleanText(d.text))
			words = append(words, textindex.Terms(d.text)...)
		}
	}
	o := newFTSOracle(t)
	r := rand.New(rand.NewPCG(3, 44))
	rounds := 200
	if raceEnabled {
		rounds = 30
	}
	for range rounds {
		i := r.IntN(len(words) - 1)
		w := words[r.IntN(len(words))]
		q := []string{w, w + " " + words[i], `"` + words[i] + " " + words[i+1] + `"`, w[:1+r.IntN(len(w))] + "*"}[r.IntN(4)]
		if !compareOracle(t, o, q, texts) || relaxed(q) {
			t.Fatalf("query %q: not exactly FTS5's", q)
		}
	}
}
