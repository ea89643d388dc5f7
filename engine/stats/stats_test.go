package stats_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/message"
)

// usageOpt compares Usages (message.Usage) by their counts and costs:
// the unknown members they keep are not what a count is about.
var usageOpt = cmpopts.IgnoreUnexported(message.Fields{})

func TestReadUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     stats.Usage
	}{
		{"full", `{"input":10,"output":20,"cacheRead":5,"cacheWrite":1,"totalTokens":40,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.5}}`,
			usage(10, 20, 5, 1, 40, 0.1, 0.2, 0.01, 0.02, 0.5)},
		{"totals summed when absent", `{"input":10,"output":20,"cacheRead":5,"cacheWrite":1,"cost":{"input":0.25,"output":0.5}}`,
			usage(10, 20, 5, 1, 36, 0.25, 0.5, 0, 0, 0.75)},
		{"lenient", `{"input":"10","output":2.6,"cost":null}`, usage(0, 3, 0, 0, 3, 0, 0, 0, 0, 0)},
		{"not an object", `[1,2]`, stats.Usage{}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, stats.ReadUsage([]byte(tc.in)), usageOpt); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func usage(in, out, cr, cw, total int64, cin, cout, ccr, ccw, ctotal float64) stats.Usage {
	var u stats.Usage
	u.Input, u.Output, u.CacheRead, u.CacheWrite, u.TotalTokens = in, out, cr, cw, total
	u.Cost.Input, u.Cost.Output, u.Cost.CacheRead, u.Cost.CacheWrite, u.Cost.Total = cin, cout, ccr, ccw, ctotal
	return u
}

func entries(t *testing.T, lines ...string) []*jsonl.Entry {
	t.Helper()
	var out []*jsonl.Entry
	for _, l := range lines {
		en, err := jsonl.ParseEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &en)
	}
	return out
}

func TestCount(t *testing.T) {
	t.Parallel()
	s := stats.Count(entries(t,
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","provider":"p","model":"small","usage":{"input":1,"output":1}}}`,
		`{"type":"message","id":"c","parentId":"b","message":{"role":"assistant","provider":"p","model":"big","usage":{"input":10,"output":10,"cost":{"total":0.3}}}}`,
		`{"type":"message","id":"d","parentId":"c","message":{"role":"assistant","model":"big"}}`,
		`{"type":"label","id":"e","parentId":"d","targetId":"a","label":"x"}`,
		`{"id":"f","parentId":"e"}`,
	))
	if s.Entries != 6 || s.Messages != 4 || !cmp.Equal(s.Types, map[string]int{"message": 4, "label": 1, "(none)": 1}) ||
		!cmp.Equal(s.Roles, map[string]int{"user": 1, "assistant": 3}) {
		t.Errorf("counts: %+v", s)
	}
	if s.Usage.TotalTokens != 22 || s.Usage.Cost.Total != 0.3 {
		t.Errorf("usage: %+v", s.Usage)
	}
	var models []string
	for _, m := range s.Models {
		models = append(models, m.Model)
	}
	// By total tokens, then by name; a model without a provider is named alone.
	if diff := cmp.Diff([]string{"p/big", "p/small", "big"}, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

func TestModelName(t *testing.T) {
	t.Parallel()
	for _, tc := range [][3]string{{"", "", "unknown"}, {"", "m", "m"}, {"p", "", "p/?"}, {"p", "m", "p/m"}} {
		if got := stats.ModelName(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ModelName(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	msg := `{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":1,"output":2}}}`
	testenv.WriteFile(t, filepath.Join(root, "--p--", "one.jsonl"), testenv.Lines(testenv.PiHeader, msg))
	testenv.WriteFile(t, filepath.Join(root, "--q--", "two.jsonl"), testenv.Lines(testenv.PiHeader, msg, testenv.PiMessage("b", "a")))
	testenv.WriteFile(t, filepath.Join(root, "--q--", "bad.jsonl"), testenv.Lines(msg))
	testenv.WriteFile(t, filepath.Join(root, ".trash", "x", "gone.jsonl"), testenv.Lines(testenv.PiHeader, msg))
	var skipped, headers []string
	total, err := stats.Dir(context.Background(), root, stats.DirOptions{
		Skip:   func(p string, err error) { skipped = append(skipped, filepath.Base(p)+": "+err.Error()) },
		Header: func(p string, _ jsonl.Entry) { headers = append(headers, filepath.Base(p)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if total.Sessions != 2 || total.Skipped != 1 || total.All.Entries != 3 || total.All.Usage.TotalTokens != 6 {
		t.Errorf("total: %+v, all %+v", total, total.All)
	}
	if diff := cmp.Diff([]string{"bad.jsonl: no session header"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"one.jsonl", "two.jsonl"}, headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := stats.Dir(ctx, root, stats.DirOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled walk: %v", err)
	}
}

// TestCountPi16Usage: pi 1.x's usage entries count for their model, the
// usage of compactions, branch summaries and tool results as
// SummariesProvider's, each once; a context edit changes nothing.
func TestCountPi16Usage(t *testing.T) {
	t.Parallel()
	s := stats.Count(entries(t,
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":1,"output":1,"cost":{"total":0.01}}}}`,
		`{"type":"usage","id":"c","parentId":"b","kind":"title","provider":"p","model":"small","usage":{"input":5,"output":5,"cost":{"total":0.1}}}`,
		`{"type":"compaction","id":"d","parentId":"c","summary":"S","firstKeptEntryId":"d","tokensBefore":1,"usage":{"input":100,"output":10,"cost":{"total":1}}}`,
		`{"type":"branch_summary","id":"e","parentId":"d","fromId":"d","summary":"B","usage":{"input":20,"output":2}}`,
		`{"type":"message","id":"f","parentId":"e","message":{"role":"toolResult","toolCallId":"1","toolName":"code","content":[],"usage":{"input":3,"output":3}}}`,
		`{"type":"context_edit","id":"g","parentId":"f","targetId":"b","replacement":null}`,
	))
	if s.Usage.TotalTokens != 2+10+110+22+6 || s.Usage.Cost.Total != 1.11 {
		t.Errorf("usage: %+v", s.Usage)
	}
	if s.Messages != 3 || s.Types["usage"] != 1 || s.Types["context_edit"] != 1 {
		t.Errorf("counts: %+v", s)
	}
	got := map[string][2]float64{}
	for _, m := range s.Models {
		got[m.Model] = [2]float64{float64(m.Messages), float64(m.Usage.TotalTokens)}
	}
	want := map[string][2]float64{"p/m": {1, 2}, "p/small": {0, 10}, stats.SummariesProvider: {0, 138}}
	if diff := cmp.Diff(want, got, usageOpt); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

// TestEntrySpent: what EntrySpent says each entry spent adds up to what
// a Scope counts, per model; entries that spent nothing say so.
func TestEntrySpent(t *testing.T) {
	t.Parallel()
	es := entries(t,
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","provider":"p","model":"m","usage":{"input":1,"output":1,"cost":{"total":0.01}}}}`,
		`{"type":"message","id":"b2","parentId":"b","message":{"role":"assistant","provider":"p","model":"m"}}`,
		`{"type":"usage","id":"c","parentId":"b","kind":"title","provider":"p","model":"small","usage":{"input":5,"output":5,"cost":{"total":0.1}}}`,
		`{"type":"compaction","id":"d","parentId":"c","summary":"S","firstKeptEntryId":"d","tokensBefore":1,"usage":{"input":100,"output":10,"cost":{"total":1}}}`,
		`{"type":"message","id":"f","parentId":"e","message":{"role":"toolResult","toolCallId":"1","toolName":"code","content":[],"usage":{"input":3,"output":3}}}`,
		`{"type":"label","id":"g","parentId":"f","targetId":"b","label":"x"}`,
	)
	s := stats.Count(es)
	tokens, messages := map[string]int64{}, map[string]int{}
	for i, e := range es {
		sp, ok := stats.EntrySpent(e)
		if ok != (i != 0 && i != 6) {
			t.Errorf("entry %s: spent %v", e.ID, ok)
		}
		tokens[sp.Model] += sp.Usage.TotalTokens
		if sp.Message {
			messages[sp.Model]++
		}
	}
	for _, m := range s.Models {
		if tokens[m.Model] != m.Usage.TotalTokens || messages[m.Model] != m.Messages {
			t.Errorf("%s: %d tokens, %d messages; the Scope counts %d, %d", m.Model, tokens[m.Model], messages[m.Model], m.Usage.TotalTokens, m.Messages)
		}
	}
	if messages["p/m"] != 2 {
		t.Errorf("assistant messages of p/m: %d, want 2 (with or without usage)", messages["p/m"])
	}
}
