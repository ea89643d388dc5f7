package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prepSummary is what the worked examples of pi-compaction.md section 11
// pin down about a preparation.
type prepSummary struct {
	FirstKept      string
	Split          bool
	TurnStart      int
	History        []string // roles of MessagesToSummarize
	Prefix         []string // roles of TurnPrefixMessages
	TokensBefore   float64
	Previous       string
	Files          FileLists
	HistoryRequest string // Kind, "" when no history request
	PrefixRequest  string // Kind, "" when no turn-prefix request
}

func summarize(p *Preparation) prepSummary {
	s := prepSummary{
		FirstKept:    p.FirstKeptEntryID,
		Split:        p.IsSplitTurn,
		TurnStart:    p.TurnStartIndex,
		History:      roles(p.MessagesToSummarize),
		Prefix:       roles(p.TurnPrefixMessages),
		TokensBefore: p.TokensBefore,
		Previous:     p.PreviousSummary,
		Files:        p.FileOps.Lists(),
	}
	if p.History != nil {
		s.HistoryRequest = string(p.History.Kind)
	}
	if p.TurnPrefix != nil {
		s.PrefixRequest = string(p.TurnPrefix.Kind)
	}
	return s
}

func settingsKeep(keep int) Settings {
	s := DefaultSettings()
	s.KeepRecentTokens = keep
	return s
}

var noFiles = FileLists{ReadFiles: []string{}, ModifiedFiles: []string{}}

// prepCase is a path, a keepRecentTokens and pi's preparation for them.
type prepCase struct {
	name    string
	keep    int
	build   func(b *pathBuilder)
	want    prepSummary
	wantErr error
}

// c1Details are the details of E6's first compaction.
const c1Details = `{"readFiles":["r1.ts","m1.ts"],"modifiedFiles":["m2.ts"]}`

// workedExamples are the worked examples E1-E8 of pi-compaction.md
// section 11, with pi 1.6.0's answers (the reference; E6 and E8 differ
// from 0.58.3's, which the spec gives: the window now starts at the
// previous compaction's first kept entry; 1.6.0 counts no all-zero
// usage, so TokensBefore is estimated, refuses a compaction with nothing
// to summarise, and keeps the call before trailing tool results). TestPrepareCasesArePis checks
// every want against pi itself.
var workedExamples = []prepCase{
	{
		name:  "E1 cut on a user message",
		keep:  200,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).user(100).asst(100, 0) },
		want:  prepSummary{FirstKept: "e2", Split: false, TurnStart: -1, History: []string{"user", "assistant"}, Prefix: []string{}, TokensBefore: 400, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: ""},
	},
	{
		name:  "E2 split turn with empty history",
		keep:  201,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).user(100).asst(100, 0) },
		want:  prepSummary{FirstKept: "e1", Split: true, TurnStart: 0, History: []string{}, Prefix: []string{"user"}, TokensBefore: 400, Previous: "", Files: noFiles, HistoryRequest: "", PrefixRequest: "turn-prefix"},
	},
	{
		name: "E3 long split turn",
		keep: 500,
		build: func(b *pathBuilder) {
			b.user(100).asst(100, 0).
				user(1).asst(6, 0, call{"read", "a.ts"}).tool(1000).asst(13, 0, call{"edit", "a.ts"}).
				tool(1).asst(10, 0, call{"write", "b.ts"}).tool(500).asst(100, 0)
		},
		want: prepSummary{FirstKept: "e9", Split: true, TurnStart: 2, History: []string{"user", "assistant"}, Prefix: []string{"user", "assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult"}, TokensBefore: 1831, Previous: "", Files: FileLists{ReadFiles: []string{}, ModifiedFiles: []string{"a.ts", "b.ts"}}, HistoryRequest: "history", PrefixRequest: "turn-prefix"},
	},
	{
		name:  "E4 pull-back onto a model change splits the previous turn",
		keep:  150,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).modelChange().user(100).asst(100, 0) },
		want:  prepSummary{FirstKept: "e2", Split: true, TurnStart: 0, History: []string{}, Prefix: []string{"user", "assistant"}, TokensBefore: 400, Previous: "", Files: noFiles, HistoryRequest: "", PrefixRequest: "turn-prefix"},
	},
	{
		name:  "E5 budget crossed inside trailing tool results keeps their call",
		keep:  1000,
		build: func(b *pathBuilder) { b.user(100).asst(10, 0).user(1).asst(6, 0, call{"read", "f.ts"}).tool(2000) },
		want:  prepSummary{FirstKept: "e3", Split: true, TurnStart: 2, History: []string{"user", "assistant"}, Prefix: []string{"user"}, TokensBefore: 2117, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: "turn-prefix"},
	},
	{
		name: "E6 second compaction updates the summary and carries files",
		keep: 300,
		build: func(b *pathBuilder) {
			b.user(1000).asst(1006, 0, call{"read", "old.ts"}).user(100).asst(100, 50200).
				compaction("S1", "e2", c1Details, false).
				user(1000).asst(1005, 0, call{"edit", "m1.ts"}).user(200).asst(100, 3100)
		},
		// The window starts at C1's first kept entry (e2): u100 and
		// a100 are summarised with the rest (0.58.3 lost them).
		want: prepSummary{FirstKept: "e7", TurnStart: -1, History: []string{"user", "assistant", "user", "assistant"}, Prefix: []string{},
			TokensBefore: 3100, Previous: "S1",
			Files:          FileLists{ReadFiles: []string{"r1.ts"}, ModifiedFiles: []string{"m1.ts", "m2.ts"}},
			HistoryRequest: "history-update"},
	},
	{
		name:    "E7 already compacted",
		keep:    300,
		build:   func(b *pathBuilder) { b.user(1).asst(1, 0).compaction("S1", "e0", "", false) },
		wantErr: ErrAlreadyCompacted,
	},
	{
		name: "E8 the previous compaction's kept entries stay in the window",
		keep: 300,
		build: func(b *pathBuilder) {
			b.user(1000).asst(1000, 0).user(100).asst(100, 50200).compaction("S1", "e2", "", false).user(50)
		},
		// The window is [u100 a100 C1 u50]; the context (S1, u100,
		// a100, u50) holds a100's usage, 50200, and u50: 50250.
		// 0.58.3 kept only u50 (firstKept e5, tokensBefore 51).
		wantErr: ErrNothingToCompact,
	},
}

// TestPrepareWorkedExamples checks the worked examples.
func TestPrepareWorkedExamples(t *testing.T) {
	t.Parallel()
	checkPrepCases(t, workedExamples)
}

func checkPrepCases(t *testing.T, cases []prepCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b pathBuilder
			tc.build(&b)
			p, err := Prepare(b.path(t), settingsKeep(tc.keep))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Prepare error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(p)); diff != "" {
				t.Errorf("preparation (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompactE2E3 checks the assembled summaries and the request
// parameters of E2 and E3.
func TestCompactWorkedSummaries(t *testing.T) {
	t.Parallel()
	byKind := Func(func(_ context.Context, r Request) (string, error) {
		return "<" + string(r.Kind) + ">", nil
	})
	tests := []struct {
		name      string
		keep      int
		reasoning bool
		build     func(b *pathBuilder)
		want      Result
		requests  map[Kind][2]any // kind -> {maxTokens, reasoning}
	}{
		{
			name:  "E2",
			keep:  201,
			build: func(b *pathBuilder) { b.user(100).asst(100, 0).user(100).asst(100, 0) },
			// The all-zero usages of the builder's replies are no usage
			// (pi 1.x): TokensBefore is the estimate.
			want: Result{Summary: "No prior history." + SplitTurnSeparator + "<turn-prefix>", FirstKeptEntryID: "e1",
				TokensBefore: 400, Details: noFiles},
			requests: map[Kind][2]any{KindTurnPrefix: {0, ""}},
		},
		{
			name:      "E3",
			keep:      500,
			reasoning: true,
			build: func(b *pathBuilder) {
				b.user(100).asst(100, 0).
					user(1).asst(6, 0, call{"read", "a.ts"}).tool(1000).asst(13, 0, call{"edit", "a.ts"}).
					tool(1).asst(10, 0, call{"write", "b.ts"}).tool(500).asst(100, 0)
			},
			want: Result{
				Summary:          "<history>" + SplitTurnSeparator + "<turn-prefix>\n\n<modified-files>\na.ts\nb.ts\n</modified-files>",
				FirstKeptEntryID: "e9",
				TokensBefore:     1831,
				Details:          FileLists{ReadFiles: []string{}, ModifiedFiles: []string{"a.ts", "b.ts"}},
			},
			// A reasoning model, but the session's thinking level is off
			// (0.58.3 asked "high" for the history).
			requests: map[Kind][2]any{KindTurnPrefix: {0, ""}, KindHistory: {0, ""}},
		},
		{
			name:      "E3 at thinking level high",
			keep:      500,
			reasoning: true,
			build: func(b *pathBuilder) {
				b.thinking("high").user(100).asst(100, 0).
					user(1).asst(6, 0, call{"read", "a.ts"}).tool(1000).asst(13, 0, call{"edit", "a.ts"}).
					tool(1).asst(10, 0, call{"write", "b.ts"}).tool(500).asst(100, 0)
			},
			want: Result{
				Summary:          "<history>" + SplitTurnSeparator + "<turn-prefix>\n\n<modified-files>\na.ts\nb.ts\n</modified-files>",
				FirstKeptEntryID: "e10",
				TokensBefore:     1831,
				Details:          FileLists{ReadFiles: []string{}, ModifiedFiles: []string{"a.ts", "b.ts"}},
			},
			requests: map[Kind][2]any{KindTurnPrefix: {0, "high"}, KindHistory: {0, "high"}},
		},
		{
			name:      "E3 at thinking level high, a model that does not reason",
			keep:      500,
			reasoning: false,
			build: func(b *pathBuilder) {
				b.thinking("high").user(100).asst(100, 0).
					user(1).asst(6, 0, call{"read", "a.ts"}).tool(1000).asst(13, 0, call{"edit", "a.ts"}).
					tool(1).asst(10, 0, call{"write", "b.ts"}).tool(500).asst(100, 0)
			},
			want: Result{
				Summary:          "<history>" + SplitTurnSeparator + "<turn-prefix>\n\n<modified-files>\na.ts\nb.ts\n</modified-files>",
				FirstKeptEntryID: "e10",
				TokensBefore:     1831,
				Details:          FileLists{ReadFiles: []string{}, ModifiedFiles: []string{"a.ts", "b.ts"}},
			},
			requests: map[Kind][2]any{KindTurnPrefix: {0, ""}, KindHistory: {0, ""}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b pathBuilder
			tc.build(&b)
			s := settingsKeep(tc.keep)
			s.Reasoning = tc.reasoning
			p, err := Prepare(b.path(t), s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Compact(t.Context(), p, byKind, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			reqs := map[Kind][2]any{}
			h, pre := p.Requests("")
			for _, r := range []*Request{h, pre} {
				if r != nil {
					reqs[r.Kind] = [2]any{r.MaxTokens, r.Reasoning}
				}
			}
			if diff := cmp.Diff(tc.requests, reqs); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// edgeCases cover pi-compaction.md section 9, with pi 1.6.0's answers
// (where they differ from 0.73.1's, the want was moved to pi 1.6.0's).
var edgeCases = []prepCase{
	{
		name:    "empty path",
		keep:    100,
		build:   func(b *pathBuilder) {},
		wantErr: ErrNothingToCompact,
	},
	{
		name:    "everything fits: nothing to compact",
		keep:    100000,
		build:   func(b *pathBuilder) { b.user(10).asst(10, 0) },
		wantErr: ErrNothingToCompact,
	},
	{
		name:  "keep 0 with a trailing tool result keeps its call",
		keep:  0,
		build: func(b *pathBuilder) { b.user(10).asst(10, 0, call{"read", "x"}).tool(10) },
		want:  prepSummary{FirstKept: "e1", Split: true, TurnStart: 0, History: []string{}, Prefix: []string{"user"}, TokensBefore: 30, Previous: "", Files: noFiles, HistoryRequest: "", PrefixRequest: "turn-prefix"},
	},
	{
		name: "only non-message entries after a compaction: the cut falls in the kept range",
		keep: 10,
		build: func(b *pathBuilder) {
			b.user(10).asst(10, 0).compaction("S1", "e0", "", false).modelChange().label("e0")
		},
		// The window starts at e0 (C1 kept it), so the cut lands on
		// a10, splitting the turn of u10 (0.58.3 had no cut point after
		// C1 and kept e3 on).
		want: prepSummary{FirstKept: "e1", Split: true, TurnStart: 0, History: []string{}, Prefix: []string{"user"}, TokensBefore: 21, Previous: "S1", Files: noFiles, HistoryRequest: "", PrefixRequest: "turn-prefix"},
	},
	{
		name:  "bashExecution cut: a turn start, not split",
		keep:  10,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).bash(10, false) },
		want:  prepSummary{FirstKept: "e2", Split: false, TurnStart: -1, History: []string{"user", "assistant"}, Prefix: []string{}, TokensBefore: 210, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: ""},
	},
	{
		name:  "custom_message cut after the pull-back: split flag, empty prefix",
		keep:  100,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).customMessage(fill(1000)).asst(100, 0) },
		want:  prepSummary{FirstKept: "e3", Split: true, TurnStart: 2, History: []string{"user", "assistant"}, Prefix: []string{"custom"}, TokensBefore: 1300, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: "turn-prefix"},
	},
	{
		name:  "a custom_message adds its tokens to the walk",
		keep:  150,
		build: func(b *pathBuilder) { b.user(100).asst(100, 0).customMessage(fill(1000)).asst(100, 0) },
		want:  prepSummary{FirstKept: "e2", Split: false, TurnStart: -1, History: []string{"user", "assistant"}, Prefix: []string{}, TokensBefore: 1300, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: ""},
	},
	{
		name: "an extension's previous compaction: summary used, details ignored",
		keep: 10,
		build: func(b *pathBuilder) {
			b.user(10).compaction("EXT", "e0", `{"readFiles":["x.ts"],"modifiedFiles":["y.ts"]}`, true).user(100).asst(100, 0)
		},
		want: prepSummary{FirstKept: "e3", Split: true, TurnStart: 2, History: []string{"user"}, Prefix: []string{"user"}, TokensBefore: 211, Previous: "EXT", Files: noFiles, HistoryRequest: "history-update", PrefixRequest: "turn-prefix"},
	},
	{
		name: "the kept user message starts the turn the cut splits",
		keep: 100,
		build: func(b *pathBuilder) {
			b.user(10).compaction("S", "e0", "", false).asst(100, 0, call{"bash", "x"}).tool(10).asst(100, 0)
		},
		// The window starts at e0, the user message C1 kept, which
		// starts the turn (0.58.3: no turn start after C1, not split).
		want: prepSummary{FirstKept: "e4", Split: true, TurnStart: 0, History: []string{}, Prefix: []string{"user", "assistant", "toolResult"}, TokensBefore: 221, Previous: "S", Files: noFiles, HistoryRequest: "", PrefixRequest: "turn-prefix"},
	},
	{
		name: "a branch summary is a cut point: the label before the user stays",
		keep: 100,
		build: func(b *pathBuilder) {
			b.user(100).asst(100, 0).label("e0").branchSummary("went elsewhere", "", false).user(100)
		},
		want: prepSummary{FirstKept: "e4", Split: false, TurnStart: -1, History: []string{"user", "assistant", "branchSummary"}, Prefix: []string{}, TokensBefore: 304, Previous: "", Files: noFiles, HistoryRequest: "history", PrefixRequest: ""},
	},
}

// TestPrepareEdgeCases checks the edge cases.
func TestPrepareEdgeCases(t *testing.T) {
	t.Parallel()
	checkPrepCases(t, edgeCases)
}

func TestPrepareNoID(t *testing.T) {
	t.Parallel()
	path := parseLines(t,
		`{"type":"message","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`,
	)
	if _, err := Prepare(path, DefaultSettings()); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("Prepare = %v, want ErrNothingToCompact", err)
	}
}

// TestEverythingFitsIsNothingToCompact: when the whole path fits in
// keepRecentTokens there is nothing to summarise, and pi 1.x prepares
// nothing (0.73.1 still sent a request with an empty conversation).
func TestEverythingFitsIsNothingToCompact(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.user(10).asst(10, 0)
	if _, err := Prepare(b.path(t), settingsKeep(100000)); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("Prepare = %v, want ErrNothingToCompact", err)
	}
}

func TestUpdateRequestPrompt(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.userText("first").asst(5, 0).compaction("OLD SUMMARY", "e0", "", false).userText("second").asst(5, 0).userText("third")
	p, err := Prepare(b.path(t), settingsKeep(1))
	if err != nil {
		t.Fatal(err)
	}
	// The window starts at "first", which the old compaction kept.
	want := "<conversation>\n[User]: first\n\n[Assistant]: " + strings.Repeat("y", 20) + "\n\n[User]: second\n\n[Assistant]: " + strings.Repeat("y", 20) + "\n</conversation>\n\n" +
		"<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n" + UpdatePrompt
	if diff := cmp.Diff(want, p.History.Prompt); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
	if p.History.SystemPrompt != SystemPrompt || p.History.MaxTokens != 0 || p.History.Reasoning != "" {
		t.Errorf("request parameters: %q %d %q", p.History.SystemPrompt[:20], p.History.MaxTokens, p.History.Reasoning)
	}
}

func TestCompactErrors(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.user(100).asst(100, 0).user(100).asst(100, 0)
	p, err := Prepare(b.path(t), settingsKeep(201)) // E2: only a turn-prefix request
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, err = Compact(t.Context(), p, Func(func(context.Context, Request) (string, error) { return "", boom }), "")
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "turn prefix") {
		t.Fatalf("Compact error = %v", err)
	}
}

// TestTokensBeforeIgnoresNaNUsage: a usage whose sum is NaN (a missing
// component) is no usage in pi 1.x, so TokensBefore is the estimate of the
// messages (0.73.1 gave NaN).
func TestTokensBeforeIgnoresNaNUsage(t *testing.T) {
	t.Parallel()
	path := parseLines(t,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"assistant","content":[],"usage":{"input":5},"stopReason":"stop","timestamp":1}}`,
		`{"type":"message","id":"c","parentId":"b","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"there","timestamp":1}}`,
	)
	p, err := Prepare(path, settingsKeep(1))
	if err != nil {
		t.Fatal(err)
	}
	if p.TokensBefore != 3 {
		t.Fatalf("TokensBefore = %v, want 3 (1 + 0 + 2, the usage ignored)", p.TokensBefore)
	}
}

// TestRequestsJSON checks the dry-run JSON of the requests: one object
// per request, with the prompt that carries the custom instructions.
func TestRequestsJSON(t *testing.T) {
	t.Parallel()
	var b pathBuilder
	b.user(100).asst(100, 0).user(100).asst(100, 0)
	p, err := Prepare(b.path(t), settingsKeep(200))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Kind, SystemPrompt, Prompt, Reasoning, ConversationText string
		MaxTokens                                               int
	}
	if err := json.Unmarshal(p.RequestsJSON("be brief"), &got); err != nil {
		t.Fatal(err)
	}
	h, _ := p.Requests("be brief")
	if len(got) != 1 || got[0].Kind != string(h.Kind) || got[0].Prompt != h.Prompt || got[0].MaxTokens != h.MaxTokens || got[0].SystemPrompt != SystemPrompt {
		t.Errorf("RequestsJSON = %+v", got)
	}
}
