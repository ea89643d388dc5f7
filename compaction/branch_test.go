package compaction

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// branchTree is:
//
//	a (user) - b (assistant, read x.ts) - c (toolResult) - d (user) - e (assistant, edit y.ts)
//	                                    \ f (user) - g (assistant)
func branchTree(t *testing.T) *tree.Index {
	t.Helper()
	lines := []string{
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":"start","timestamp":1}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"read","arguments":{"path":"x.ts"}}],"stopReason":"toolUse","timestamp":1}}`,
		`{"type":"message","id":"c","parentId":"b","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"toolResult","toolCallId":"1","toolName":"read","content":[{"type":"text","text":"file body"}],"isError":false,"timestamp":1}}`,
		`{"type":"message","id":"d","parentId":"c","timestamp":"2026-03-01T09:00:03.000Z","message":{"role":"user","content":"edit it","timestamp":1}}`,
		`{"type":"message","id":"e","parentId":"d","timestamp":"2026-03-01T09:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"2","name":"edit","arguments":{"path":"y.ts"}}],"stopReason":"toolUse","timestamp":1}}`,
		`{"type":"message","id":"f","parentId":"b","timestamp":"2026-03-01T09:00:05.000Z","message":{"role":"user","content":"other way","timestamp":1}}`,
		`{"type":"message","id":"g","parentId":"f","timestamp":"2026-03-01T09:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop","timestamp":1}}`,
	}
	var entries []jsonl.Entry
	for _, e := range parseLines(t, lines...) {
		entries = append(entries, *e)
	}
	return tree.Build(entries)
}

func ids(es []*jsonl.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestCollectEntriesForBranchSummary(t *testing.T) {
	t.Parallel()
	ix := branchTree(t)
	tests := []struct {
		name, old, target string
		want              []string
		ancestor          string
	}{
		{"sibling branch", "e", "g", []string{"c", "d", "e"}, "b"},
		{"target is an ancestor: the target itself is excluded", "e", "d", []string{"e"}, "d"},
		{"target is a descendant: nothing", "b", "e", []string{}, "b"},
		{"no old leaf: nothing", "", "e", []string{}, ""},
		{"same entry: nothing", "g", "g", []string{}, "g"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := CollectEntriesForBranchSummary(ix, tc.old, tc.target)
			if diff := cmp.Diff(tc.want, ids(c.Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if c.CommonAncestorID != tc.ancestor || c.HasCommonAncestor != (tc.ancestor != "") {
				t.Errorf("ancestor = %q %v, want %q", c.CommonAncestorID, c.HasCommonAncestor, tc.ancestor)
			}
		})
	}
}

func TestPrepareBranchEntries(t *testing.T) {
	t.Parallel()
	ix := branchTree(t)
	c := CollectEntriesForBranchSummary(ix, "e", "g")
	p := PrepareBranchEntries(c.Entries, 0)
	// The tool result c is skipped; its call's file is still recorded.
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(p.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(FileLists{ReadFiles: []string{}, ModifiedFiles: []string{"y.ts"}}, p.FileOps.Lists()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	res := FinishBranch(&p, "TEXT")
	want := BranchSummaryPreamble + "TEXT\n\n<modified-files>\ny.ts\n</modified-files>"
	if res.Summary != want {
		t.Errorf("summary = %q", res.Summary)
	}
	req := p.Request("focus", false)
	if !strings.HasPrefix(req.Prompt, "<conversation>\n[User]: edit it\n\n[Assistant tool calls]: edit(path=\"y.ts\")\n</conversation>\n\n"+BranchPrompt) ||
		!strings.HasSuffix(req.Prompt, "\n\nAdditional focus: focus") || req.MaxTokens != 0 || req.Kind != KindBranch {
		t.Errorf("request = %+v", req)
	}
	if r := p.Request("only this", true); !strings.HasSuffix(r.Prompt, "</conversation>\n\nonly this") || !r.ReplaceInstructions {
		t.Errorf("replace request prompt = %q", r.Prompt)
	}
}

func TestPrepareBranchBudget(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.user(100).branchSummary(fill(50), `{"readFiles":["r.ts"],"modifiedFiles":["m.ts"]}`, false).
		branchSummary("ext", `{"readFiles":["hook.ts"]}`, true).
		compaction(fill(300), "e0", `{"readFiles":["c.ts"]}`, false).user(100).asst(100, 0)
	entries := b.path(t)
	tests := []struct {
		name   string
		budget int
		want   []string
		total  int
	}{
		{"no limit", 0, []string{"user", "branchSummary", "branchSummary", "compactionSummary", "user", "assistant"}, 651},
		{"stops at the first message that does not fit", 600, []string{"branchSummary", "branchSummary", "compactionSummary", "user", "assistant"}, 551},
		// 200 < 0.9*400, so the compaction is taken although it exceeds the budget.
		{"a summary that does not fit is still taken below 90%", 400, []string{"compactionSummary", "user", "assistant"}, 500},
		{"but not at or above 90%", 220, []string{"user", "assistant"}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := PrepareBranchEntries(entries, tc.budget)
			if diff := cmp.Diff(tc.want, roles(p.Messages)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if p.TotalTokens != tc.total {
				t.Errorf("total = %d, want %d", p.TotalTokens, tc.total)
			}
			// Only branch summaries not made by an extension carry files over.
			want := FileLists{ReadFiles: []string{"r.ts"}, ModifiedFiles: []string{"m.ts"}}
			if diff := cmp.Diff(want, p.FileOps.Lists()); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoContentToSummarize(t *testing.T) {
	t.Parallel()
	ix := branchTree(t)
	// From c (a tool result) back to b: only the tool result is collected.
	c := CollectEntriesForBranchSummary(ix, "c", "f")
	if diff := cmp.Diff([]string{"c"}, ids(c.Entries)); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	p := PrepareBranchEntries(c.Entries, BranchBudget(0, 16384))
	called := false
	res, err := SummarizeBranch(t.Context(), &p, Func(func(_ context.Context, _ Request) (string, error) {
		called = true
		return "x", nil
	}), "", false)
	if err != nil || called {
		t.Fatalf("SummarizeBranch err=%v called=%v", err, called)
	}
	want := BranchResult{Summary: NoContentToSummarize, Details: FileLists{ReadFiles: []string{}, ModifiedFiles: []string{}}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if BranchBudget(0, 16384) != 128000-16384 || BranchBudget(200000, 16384) != 200000-16384 {
		t.Errorf("BranchBudget")
	}
}
